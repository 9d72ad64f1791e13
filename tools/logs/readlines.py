"""readlines: a bounded range of an approved log's lines, to read around a hit.

Lines `start` to `start + count - 1` (at most 200), numbered as in the file; the summary states
the exact range read (the lines a chooser has seen, seed 001 §14's "exact consumed ranges") and
whether the log ended before it. Lines before the range are counted, not kept, and reading stops
at the range's end.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from itertools import islice
from typing import Annotated

from pydantic import Field

from scenario.reading import open_record
from scenario.registry import Record
from tools.args import LogId, ToolArgs
from tools.excerpt import Excerpt, make_excerpt, make_line
from tools.stream.lines import iter_lines

MAX_RANGE_LINES = 200


class ReadLinesArgs(ToolArgs):
    path: LogId
    """The exact id of an approved `log` record."""
    start: Annotated[int, Field(ge=1, le=1 << 40)]
    """The first line to read (the file's first line is 1)."""
    count: Annotated[int, Field(ge=1, le=MAX_RANGE_LINES)] = 50
    """How many lines to read from `start`."""


def run(args: ReadLinesArgs, records: Mapping[str, Record]) -> Excerpt:
    """A range of an approved log's lines by number (at most 200 from `start`), to read around a
    hit."""
    last_asked = args.start + args.count - 1
    with open_record(records["path"]) as stream:
        numbered = iter_lines(stream)
        before = deque(islice(numbered, args.start - 1), maxlen=1)  # counted, not kept
        lines = [make_line(number, raw) for number, raw in islice(numbered, args.count)]
    if not lines:
        total = before[0][0] if before else 0
        return make_excerpt(f"nothing at line {args.start}: the log has {total} line(s)", (), False)
    first, last = lines[0].number, lines[-1].number
    summary = f"lines {first}–{last}"
    if last < last_asked:
        summary += f" (the log ends at line {last}; {last_asked - last} asked for past it)"
    return make_excerpt(summary, lines, truncated=False)
