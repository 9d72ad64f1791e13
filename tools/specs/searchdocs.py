"""searchdocs: which passages of the approved specs hold a query's words, best first (BM25).

No argument names a spec: the tool reads every approved `spec` record (`reads_every`; the guard
resolves and checks each one, `guards/checks.py`), Markdown by sections and PDFs by pages
(`docindex.py`). Each candidate is a line `#1 spec.md@1a2b3c4d5e6f:9: section 'Reset release',
lines 9–14 (score 3.21)` (rank, record, version, first line, place), then at most
`MAX_LINES_PER_CANDIDATE` of its lines that hold a query word, numbered as readspec
(`#1 spec.md:12: text`) or readpages (`#1 manual.pdf:p14:3: text`) numbers them. Candidates are
found, not read: no citation of their lines resolves (`tools/specs/CANDIDATE_TOOLS`); a reader
opens the passage with readspec or readpages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

from pydantic import AfterValidator, Field

from scenario.manifest import RecordKind
from scenario.registry import Record
from tools.args import EVERY, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.specs.docindex import Hit, search, words_of

MAX_LIMIT = 20
MAX_LINES_PER_CANDIDATE = 5
NOT_READ = (
    "candidates found by their words, not read: open one with readspec or readpages to cite it"
)


def _has_words(value: str) -> str:
    if not words_of(value):
        raise ValueError("must hold a word (letters or digits)")
    return value


class SearchDocsArgs(ToolArgs):
    reads_every: ClassVar[RecordKind | None] = "spec"
    query: Annotated[SearchText, AfterValidator(_has_words)]
    """Words to look for (any of them; whole words, any case); other characters separate them."""
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = 5
    """How many candidates to show, best first."""


def run(args: SearchDocsArgs, records: Mapping[str, Record]) -> Excerpt:
    """Which sections of the approved Markdown specs and pages of the PDF ones hold the query's
    words, best first (BM25), with the lines that hold them: candidates to open with readspec or
    readpages, not content read."""
    specs = [record for field, record in records.items() if field.startswith(f"{EVERY}.")]
    if not specs:
        return make_excerpt("no spec is approved: nothing to search", (), False)
    words = words_of(args.query)
    hits, read = search(specs, words, args.limit + 1)
    shown = hits[: args.limit]
    lines = [
        line for rank, hit in enumerate(shown, start=1) for line in _candidate(rank, hit, words)
    ]
    more = len(hits) > args.limit
    asked = " or ".join(dict.fromkeys(words))
    past = ", the best of more" if more else ""
    summary = (
        f"{len(shown)} passage(s) of {len(specs)} spec(s) holding {asked}{past}, best first"
        f" (BM25); {NOT_READ}"
        if shown
        else f"no passage of {len(specs)} spec(s) holds {asked}"
    )
    return make_excerpt(summary, lines, more, read.unknowns)


def _candidate(rank: int, hit: Hit, words: list[str]) -> list[Line]:
    """The candidate's heading line, then its lines that hold a query word (at most
    `MAX_LINES_PER_CANDIDATE`; the heading line says how many more)."""
    passage, wanted = hit.passage, set(words)
    record = passage.record
    holding = [(n, text) for n, text in passage.lines if wanted.intersection(words_of(text))]
    where = f"{record.id}:p{passage.page}" if passage.page is not None else record.id
    first, last = passage.lines[0][0], passage.lines[-1][0]
    span = f"lines {first}–{last}" if last > first else f"line {first}"
    version = f"{record.id}@{record.sha256[:12]}"
    header = f"#{rank} {version}:{first}: {passage.place}, {span} (score {hit.score:.2f})"
    if len(holding) > MAX_LINES_PER_CANDIDATE:
        header += f"; {len(holding) - MAX_LINES_PER_CANDIDATE} more lines hold a word"
    return [
        make_line(first, header),
        *(
            make_line(number, f"#{rank} {where}:{number}: {text}")
            for number, text in holding[:MAX_LINES_PER_CANDIDATE]
        ),
    ]
