"""readpages: whole pages of an approved PDF specification, each line numbered within its page.

A spec record is a PDF when its bytes start with `%PDF-` (told at admission: `Record.media`).
Its bytes are read whole through the record's hashed stream (`scenario/reading.py`, capped as a
spec is) and handed to pdfium (`pdfpages.py`): the text shown is the admitted version's, or the
call is refused `record_changed`. Each line is written `p14:3: text` (page 14, its line 3) and
numbered with its line in the page, so a citation names it `E2:p14:L3` (`guards/citations.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

from contract.codes import RefusalCode
from contract.errors import RecordRefusal
from scenario.reading import open_record
from scenario.registry import Record
from tools.args import SpecId, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.specs.pdfpages import UnreadablePdf, page_lines, page_texts

MAX_PAGES = 10
MAX_LINES = 600
"""Lines one call shows, over all its pages; past them the excerpt is cut and says so."""


class ReadPagesArgs(ToolArgs):
    path: SpecId
    """The exact id of an approved `spec` record that is a PDF."""
    page: Annotated[int, Field(ge=1, le=1 << 20)]
    """The first page to read (the document's first page is 1)."""
    count: Annotated[int, Field(ge=1, le=MAX_PAGES)] = 1
    """How many pages to read from `page`."""


def run(args: ReadPagesArgs, records: Mapping[str, Record]) -> Excerpt:
    """Whole pages of an approved PDF specification (at most 10 from `page`), each line written
    `p14:3: text` and cited `E2:p14:L3`."""
    record = records["path"]
    if record.media != "pdf":
        raise RecordRefusal(
            RefusalCode.INVALID_ARGUMENT,
            f"{record.id} is not a PDF; read its sections with readspec",
        )
    with open_record(record) as stream:
        data = stream.read()
    last_asked = args.page + args.count - 1
    try:
        pages = page_texts(data, args.page, args.count)
    except UnreadablePdf as exc:
        return make_excerpt(
            f"{record.id}: {exc.reason}",
            (),
            False,
            unknowns=[f"the text of {record.id} pages {args.page}–{last_asked}: unknown"],
        )
    if not pages.texts:
        raise RecordRefusal(
            RefusalCode.INVALID_ARGUMENT,
            f"{record.id} has {pages.count} page(s); page {args.page} is past its end",
        )
    lines, unknowns, truncated = _numbered(args.page, pages.texts)
    last = args.page + len(pages.texts) - 1
    summary = f"pages {args.page}–{last} of {pages.count}"
    if last < last_asked:
        summary += f" (the document ends at page {last}; {last_asked - last} asked for past it)"
    if truncated:
        summary += f" (first {len(lines)} lines shown, to page {_page_of(lines[-1])})"
    return make_excerpt(summary, lines, truncated, unknowns)


def _numbered(first: int, texts: tuple[str, ...]) -> tuple[list[Line], list[str], bool]:
    """Each page's lines, numbered within the page and marked with it; the pages without text (a
    scanned page has none pdfium can give) as unknowns; whether `MAX_LINES` cut the pages."""
    lines: list[Line] = []
    unknowns = []
    for page, text in enumerate(texts, start=first):
        found = page_lines(text)
        if not found:
            unknowns.append(f"page {page}: no text layer (a scanned page?); its text unknown")
        for number, line in enumerate(found, start=1):
            if len(lines) == MAX_LINES:
                return lines, unknowns, True
            lines.append(make_line(number, f"p{page}:{number}: {line}"))
    return lines, unknowns, False


def _page_of(line: Line) -> str:
    return line.text.split(":", 1)[0].removeprefix("p")
