"""getrunhistory: the rows of an approved run-history CSV for one test.

The CSV has a header with at least `run,date,test,status`; other columns (seed, signature, …) are
kept and shown. Cells are separated by commas, semicolons or tabs (TSV): the header tells which. The most recent `limit` rows in file order are returned, with the header as line 1.
A quoted cell may span lines (RFC 4180); such a row is shown as all its lines, each numbered.

Rows are grouped by a regular expression that reads quotes as Python's `csv` does (a tested
property holds the grouping and the cells to `csv.reader`), not by `csv.reader` itself: a row must
end after `MAX_ROW_LINES` lines, or at a line cut at `MAX_LINE_BYTES`, saying whether a quote was
still open, and the reader has no such bound (its non-strict mode ends a cut row silently, its strict
mode reads other rows differently).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Annotated, Literal

from pydantic import Field

from scenario.delimited import delimiter_for
from scenario.reading import open_record
from scenario.recordfile import HISTORY_COLUMNS
from scenario.registry import Record
from tools.args import HistoryId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.stream.lines import MAX_LINE_BYTES, iter_lines, without_bom

MAX_ROW_LINES = 50
"""A row whose quoted cell is still open after this many lines ends there, so that one stray
quote cannot swallow the rest of the file (or the excerpt)."""


@functools.cache
def _ends_quoted_pattern(delimiter: bytes) -> re.Pattern[bytes]:
    """A line whose last cell opens a quote and does not close it, read as Python's `csv` reads
    it: a quote opens a cell only at its start, `""` inside is a quote, text after the closing
    quote runs to the delimiter. Possessive, so that `"a""` is not re-read as `"a"` and `"`."""
    d = re.escape(delimiter)
    field = rb'(?:"(?:[^"]|"")*+"[^' + d + rb"]*+|[^\"" + d + rb"][^" + d + rb"]*+)?+"
    return re.compile(rb"(?:" + field + d + rb')*+"(?:[^"]|"")*+')


Row = list[tuple[int, bytes]]
"""The physical lines of one CSV row, with their line numbers."""


class RunHistoryArgs(ToolArgs):
    path: HistoryId
    """The exact id of an approved `history` record."""
    test: SearchText
    """The test name, matched exactly against the `test` column."""
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    """How many of the most recent rows to return."""


def run(args: RunHistoryArgs, records: Mapping[str, Record]) -> Excerpt:
    """The most recent rows for one test in an approved run-history CSV."""
    with open_record(records["path"]) as stream:
        lines = without_bom(iter_lines(stream))
        opening = next(lines, None)
        if opening is None:
            return make_excerpt("the history is empty", (), False)
        text = opening[1].decode("utf-8", "replace")
        delimiter = delimiter_for(text, HISTORY_COLUMNS)
        rows = _rows(chain([opening], lines), delimiter)
        first = next(rows)
        header = [cell.lower() for cell in _cells(first, delimiter)]
        test_column = header.index("test") if "test" in header else -1
        status_column = header.index("status") if "status" in header else -1
        kept: deque[list[Line]] = deque(maxlen=args.limit)
        statuses: Counter[str] = Counter()
        cut = 0
        for row in rows:
            cut += _left_open(row, delimiter)
            cells = _cells(row, delimiter)
            if 0 <= test_column < len(cells) and cells[test_column] == args.test:
                kept.append(_numbered(row))
                statuses[cells[status_column] if 0 <= status_column < len(cells) else "?"] += 1
    total = sum(statuses.values())
    if not total:
        return make_excerpt(f"no rows for test {args.test!r}", _numbered(first), False)
    counts = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
    summary = f"{args.test}: {total} row(s) ({counts}); showing the last {len(kept)} in file order"
    if cut:
        summary += f"; {cut} row(s) ended after {MAX_ROW_LINES} lines with a quote still open: rows they ran over are not counted"
    shown = [line for row in kept for line in row]
    return make_excerpt(
        summary, [*_numbered(first), *shown], truncated=total > len(kept) or bool(cut)
    )


def _left_open(row: Row, delimiter: str = ",") -> bool:
    """A row ended by `MAX_ROW_LINES` while its quoted cell was still open."""
    return len(row) == MAX_ROW_LINES and _ends_quoted(row[-1][1], True, delimiter)


def _rows(lines: Iterable[tuple[int, bytes]], delimiter: str = ",") -> Iterator[Row]:
    """The lines grouped into CSV rows: a row goes on while a quoted cell is open, but not past a
    line cut at `MAX_LINE_BYTES` (whose end is not known) or `MAX_ROW_LINES`."""
    row: Row = []
    for number, raw in lines:
        row.append((number, raw))
        cut = len(raw) >= MAX_LINE_BYTES - 1  # cut by `iter_lines`: its closing quote may be lost
        if cut or len(row) == MAX_ROW_LINES or not _ends_quoted(raw, len(row) > 1, delimiter):
            yield row
            row = []
    if row:
        yield row


def _ends_quoted(raw: bytes, continued: bool, delimiter: str = ",") -> bool:
    """Whether the line ends inside a quoted cell. A line that continues an open cell is read
    with a `"` in front, which puts it where it starts: inside a quoted cell."""
    if continued:
        raw = b'"' + raw
    pattern = _ends_quoted_pattern(delimiter.encode())
    return b'"' in raw and pattern.fullmatch(raw) is not None


def _cells(row: Row, delimiter: str = ",") -> list[str]:
    """The row's cells, stripped; a cell's line breaks are dropped (only `test` and `status` are
    compared, and the row is shown as its lines)."""
    texts = [raw.decode("utf-8", "replace") for _, raw in row]
    try:
        return [cell.strip() for cell in next(csv.reader(texts, delimiter=delimiter), [])]
    except csv.Error:  # e.g. a bare carriage return in an unquoted cell: split at the delimiters
        return [cell.strip() for cell in " ".join(texts).split(delimiter)]


def _numbered(row: Row) -> list[Line]:
    return [make_line(number, raw) for number, raw in row]


# The history as triage reads it: every row, in file order.


@dataclass(frozen=True)
class HistoryRow:
    line: int
    """The row's first line in the history (the header is line 1)."""
    run: str
    date: str
    test: str
    status: str
    signature: str

    @property
    def verdict(self) -> Literal["pass", "fail"] | None:
        status = self.status.strip().upper()
        if status in ("PASS", "PASSED"):
            return "pass"
        if status in ("FAIL", "FAILED", "ERROR"):
            return "fail"
        return None


def read_history(stream: io.BufferedIOBase) -> list[HistoryRow]:
    """A run history's rows (`getrunhistory`'s format and parsing), in file order."""
    lines = without_bom(iter_lines(stream))
    opening = next(lines, None)
    if opening is None:
        return []
    delimiter = delimiter_for(opening[1].decode("utf-8", "replace"), HISTORY_COLUMNS)
    rows = _rows(chain([opening], lines), delimiter)
    header = [cell.lower() for cell in _cells(next(rows), delimiter)]
    column = {
        name: header.index(name) for name in (*HISTORY_COLUMNS, "signature") if name in header
    }

    def cell(cells: list[str], name: str) -> str:
        index = column.get(name, -1)
        return cells[index] if 0 <= index < len(cells) else ""

    found = []
    for row in rows:
        cells = _cells(row, delimiter)
        found.append(
            HistoryRow(
                row[0][0],
                *(cell(cells, name) for name in ("run", "date", "test", "status", "signature")),
            )
        )
    return found


def history_of(record: Record) -> list[HistoryRow]:
    with open_record(record) as stream:
        return read_history(stream)
