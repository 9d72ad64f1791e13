"""`stapaths` and `stapath` over an approved `report_checks` report: the worst paths listed (only
the `limit` worst rows kept), and one endpoint's path shown, read by the line parser from the
offsets of the rows shown. What both say of a path and how a report is scanned is
`tools/sta/summary.py`'s; every line is either read or inside a range said unread.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from itertools import islice
from operator import itemgetter
from typing import Annotated, Literal

from pydantic import Field

from scenario.reading import open_record
from scenario.registry import Record
from tools.args import SearchText
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.sta.items import StaPath
from tools.sta.names import encoded
from tools.sta.reading import Reading, Unranked, over_read, unknowns
from tools.sta.scan import Row
from tools.sta.summary import ReportArgs, describe_path, described, report_rows, slack_of
from tools.sta.table_lines import SLACK, TableSelection
from tools.stream.lines import iter_lines

MAX_PATH_LINES = 150


KEY_FIELDS = itemgetter(0, 1, 2, 4)
"""A row key's corner, mode, path type and endpoint (in `stapath`'s order of arguments); also how
`stadiff` finds an endpoint whose path lost its constraint (and with it its group)."""


class PathsArgs(ReportArgs):
    group: SearchText | None = None
    status: Literal["MET", "VIOLATED"] | None = None
    limit: Annotated[int, Field(ge=1, le=200)] = 20


class PathArgs(ReportArgs):
    endpoint: SearchText
    path_type: Literal["max", "min"] = "max"
    corner: SearchText | None = None
    """Only a path of this corner; by default the worst path to the endpoint in any corner."""
    mode: SearchText | None = None


def stapaths(args: PathsArgs, records: Mapping[str, Record]) -> Excerpt:
    """The worst paths of an approved STA report, optionally of one group and status.

    The `limit` worst; paths with no slack to rank (`-format short`, cut off, or whose table was
    not read) are counted and said, and so are the report's lines not read: the count is over the
    lines read."""
    group = None if args.group is None else encoded(args.group)
    status = None if args.status is None else encoded(args.status)
    matching = 0
    unranked = Unranked()
    reading = Reading()
    others = TableSelection(args.group, args.status, args.limit)

    def selected() -> Iterator[Row]:
        nonlocal matching
        for item in report_rows(records["report"]):
            if reading.add(item):
                continue
            if not isinstance(item, (Row, StaPath)):
                others.add(item)
                continue
                continue
            if isinstance(item, StaPath) and not item.short:
                continue  # a `-format json` path: no text to rank it from
            its_group = item.group if isinstance(item, Row) else encoded(item.group)
            if group is not None and its_group != group:
                continue
            if isinstance(item, StaPath) or item.slack is None:
                unranked.add(item)
            elif status is None or item.status == status:
                matching += 1
                yield item

    worst = heapq.nsmallest(args.limit, selected(), key=slack_of)
    paths = described(records["report"], worst)
    lines = [make_line(row.line, describe_path(paths[row.line])) for row in worst] + others.lines()
    answer = (
        f"{len(worst)} of {matching} matching path(s), worst first{unranked.said(status)}"
        f"{others.said()}"
    )
    return _answered(answer, lines, matching > len(worst) or others.truncated, reading)


def _answered(answer: str, lines: list[Line], truncated: bool, reading: Reading) -> Excerpt:
    """An answer over one report, said over the lines read, its unknowns for the handover."""
    readings = {"report": reading}
    told = unknowns(readings, truncated)
    return make_excerpt(over_read(answer, readings), lines, truncated, told)


def stapath(args: PathArgs, records: Mapping[str, Record]) -> Excerpt:
    """One path of an approved STA report, with line numbers: the worst path of the type to the
    endpoint, in the corner and mode given or in any.

    The first path if none has a slack; failing any, the first `-format short` path to it (its
    header, with no slack to rank). Said over the lines read, where some of the report's were
    not."""
    record = records["report"]
    reading = Reading()
    selected, short = _candidates(record, args, reading)
    endpoint = encoded(args.endpoint)
    matching = [row for row in selected if row.endpoint == endpoint] or _pins_of(
        record, args.endpoint, selected
    )
    if not matching:
        if short:
            return _short_path(record, short, reading)
        answer = f"no {_selection(args)} ends at {args.endpoint!r}"
        return _answered(answer, [], False, reading)
    row = min((item for item in matching if item.slack is not None), key=SLACK, default=matching[0])
    found = described(record, [row])[row.line]
    last = min(found.last_line, found.first_line + MAX_PATH_LINES - 1)
    with open_record(record) as stream:
        stream.seek(row.offset)
        lines = [
            make_line(found.first_line + index, raw)
            for index, (_, raw) in enumerate(
                islice(iter_lines(stream), last - found.first_line + 1)
            )
        ]
    chosen = f"the worst of {len(matching)} matching paths: " if len(matching) > 1 else ""
    answer = f"{chosen}{describe_path(found)} (lines {found.first_line}–{found.last_line})"
    return _answered(answer, lines, last < found.last_line, reading)


def _candidates(
    record: Record, args: PathArgs, reading: Reading
) -> tuple[list[Row], list[StaPath]]:
    """In one pass: the rows of this type (corner, mode) whose endpoint starts with the name
    asked for, and the `-format short` paths that end exactly there (`reading` takes the rest)."""
    wanted = [encoded(value) for value in (args.corner, args.mode, args.path_type)]
    endpoint = encoded(args.endpoint)
    rows: list[Row] = []
    short: list[StaPath] = []
    for item in report_rows(record):
        if reading.add(item):
            continue
        if isinstance(item, Row):
            fields = KEY_FIELDS(item.key)
            if item.endpoint.startswith(endpoint) and all(
                want is None or have == want for have, want in zip(fields, wanted, strict=False)
            ):
                rows.append(item)
        elif isinstance(item, StaPath) and item.short and item.endpoint == args.endpoint:
            have = (item.corner, item.mode, item.path_type)
            wish = (args.corner, args.mode, args.path_type)
            if all(want is None or got == want for got, want in zip(have, wish, strict=True)):
                short.append(item)
    return rows, short


def _short_path(record: Record, paths: list[StaPath], reading: Reading) -> Excerpt:
    """The first of these `-format short` paths: its header lines (and the blank lines after
    it, at most `MAX_PATH_LINES` in all), read from the report's start."""
    path = paths[0]
    last = min(path.last_line, path.first_line + MAX_PATH_LINES - 1)
    with open_record(record) as stream:
        header = islice(iter_lines(stream), path.first_line - 1, last)
        lines = [make_line(number, raw) for number, raw in header]
    chosen = f"the first of {len(paths)} matching -format short paths: " if len(paths) > 1 else ""
    summary = f"{chosen}{describe_path(path)} (lines {path.first_line}–{path.last_line})"
    return _answered(summary, lines, last < path.last_line, reading)


def _pins_of(record: Record, instance: str, rows: list[Row]) -> list[Row]:
    """The rows whose endpoint is a pin of `instance` (its `Endpoint:` line names it): asked for
    an instance, `stapath` shows the worst of its pins, never a pinless endpoint below it."""
    prefix = encoded(instance) + b"/"
    candidates = [
        row
        for row in rows
        if row.endpoint.startswith(prefix) and b"/" not in row.endpoint[len(prefix) :]
    ]
    paths = described(record, candidates)
    return [row for row in candidates if paths[row.line].instance == instance]


def _selection(args: PathArgs) -> str:
    given = [
        f"{name} {value!r}"
        for name, value in (("corner", args.corner), ("mode", args.mode))
        if value
    ]
    return f"{args.path_type} path" + (f" in {' and '.join(given)}" if given else "")
