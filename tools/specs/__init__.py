"""Reading approved specifications: a PDF's pages (`readpages`); every spec searched (`searchdocs`)."""

PAGED_TOOLS = frozenset({"readpages"})
"""Tools whose excerpt lines are written `p14:3: text`, numbered within their page: a citation
names a page as it names a family's member (`E2:p14:L3`, `guards/citations.py`)."""

CANDIDATE_TOOLS = frozenset({"searchdocs"})
"""Tools whose lines are search candidates, not content read: a citation of one of their lines,
pages or commits resolves to nothing (`guards/citations.py`); the item itself, what the search
found, may be cited."""
