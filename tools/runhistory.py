"""getrunhistory: the rows of an approved run-history CSV for one test.

The CSV has a header with at least `run,date,test,status`; other columns (seed, signature, …) are
kept and shown. The most recent `limit` rows in file order are returned, with the header as line 1.
"""

from __future__ import annotations

import csv
from collections import Counter, deque
from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.lines import iter_lines
from tools.records import Record, open_record


class RunHistoryArgs(ToolArgs):
    path: RecordId
    """The exact id of an approved `history` record."""
    test: SearchText
    """The test name, matched exactly against the `test` column."""
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    """How many of the most recent rows to return."""


def run(args: RunHistoryArgs, records: Mapping[str, Record]) -> Excerpt:
    with open_record(records["path"]) as stream:
        lines = iter_lines(stream)
        first = next(lines, None)
        if first is None:
            return make_excerpt("the history is empty", (), False)
        header = [cell.lower() for cell in _cells(first[1])]
        test_column = header.index("test") if "test" in header else -1
        status_column = header.index("status") if "status" in header else -1
        kept: deque[Line] = deque(maxlen=args.limit)
        statuses: Counter[str] = Counter()
        for number, raw in lines:
            cells = _cells(raw)
            if 0 <= test_column < len(cells) and cells[test_column] == args.test:
                kept.append(make_line(number, raw))
                statuses[cells[status_column] if 0 <= status_column < len(cells) else "?"] += 1
    total = sum(statuses.values())
    if not total:
        return make_excerpt(f"no rows for test {args.test!r}", [make_line(*first)], False)
    counts = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
    summary = f"{args.test}: {total} row(s) ({counts}); showing the last {len(kept)} in file order"
    return make_excerpt(summary, [make_line(*first), *kept], truncated=total > len(kept))


def _cells(raw: bytes) -> list[str]:
    row = next(csv.reader([raw.decode("utf-8", "replace")]), [])
    return [cell.strip() for cell in row]
