"""Reading approved specifications that are not Markdown: a PDF's pages (`readpages`)."""

PAGED_TOOLS = frozenset({"readpages"})
"""Tools whose excerpt lines are written `p14:3: text`, numbered within their page: a citation
names a page as it names a family's member (`E2:p14:L3`, `guards/citations.py`)."""
