"""STA evidence tools over approved `report_checks` reports: summary, paths, one path (the diff of
two reports is `tools/stadiff.py`).

Evidence lookup only: nothing here runs an EDA command. Reports are streamed through the scan in
`tools/stascan.py`; `stapaths` keeps only the `limit` worst rows, and what a tool shows is read by the line parser from the offsets of
the rows it shows.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter, itemgetter
from typing import Annotated, Literal, TypeVar

from pydantic import Field

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.lines import iter_lines
from tools.reading import open_record
from tools.records import Record
from tools.stafigures import figure, negative_sum
from tools.staitems import (
    EndRow,
    LimitRow,
    Metric,
    Notice,
    SlackOnlyRow,
    StaPath,
    SummaryRow,
    Unrecognised,
)
from tools.stanames import encoded
from tools.stascan import Row, Scanned, describe, scan

MAX_PATH_LINES = 150
MAX_NOTICES = 10
"""Warnings, errors and `No paths found.` lines quoted by `stasummary`; the rest are counted."""


class ReportArgs(ToolArgs):
    report: RecordId
    """The exact id of an approved `sta_report` record."""


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


def report_rows(record: Record) -> Iterator[Scanned]:
    with open_record(record) as stream:
        yield from scan(stream)


def constrained(record: Record) -> Iterator[Row]:
    return (
        item for item in report_rows(record) if isinstance(item, Row) and item.slack is not None
    )


def described(record: Record, rows: Iterable[Row]) -> dict[int, StaPath]:
    """The line parser's reading of the paths these rows stand for, by their first line."""
    rows = list(rows)
    if not rows:
        return {}
    with open_record(record) as stream:
        return describe(rows, stream)


GroupKey = tuple[bytes | None, bytes | None, bytes | None, bytes | None]
"""(corner, mode, path type, group): the first four fields of a row's key."""


@dataclass
class _Group:
    """The constrained paths of one group, corner, mode and path type, and each endpoint's worst:
    TNS and the violating count are over endpoints, as STA tools count them, not over paths."""

    paths: int = 0
    worst: dict[bytes, Row] = field(default_factory=dict)

    def add(self, row: Row) -> None:
        self.paths += 1
        kept = self.worst.get(row.endpoint)
        if kept is None or slack_of(row) < slack_of(kept):
            self.worst[row.endpoint] = row


@dataclass
class _Report:
    """Everything `stasummary` counts in one pass over a report."""

    groups: dict[GroupKey, _Group] = field(default_factory=dict)
    metrics: list[Metric] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    end_rows: list[EndRow] = field(default_factory=list)
    summary_rows: list[SummaryRow] = field(default_factory=list)
    slack_only: list[SlackOnlyRow] = field(default_factory=list)
    limits: list[LimitRow] = field(default_factory=list)
    unrecognised: list[Unrecognised] = field(default_factory=list)
    truncated: int = 0
    unconstrained: int = 0
    short: int = 0
    """`-format short` paths: complete as reported, with no slack to count."""
    json_paths: list[StaPath] = field(default_factory=list)
    """Paths read from `-format json` documents."""

    def add(self, item: Scanned) -> None:
        if isinstance(item, Row):
            if item.slack is not None:
                key = item.key[:4]
                (self.groups.get(key) or self.groups.setdefault(key, _Group())).add(item)
            elif item.truncated:
                self.truncated += 1
            else:
                self.unconstrained += 1
        elif isinstance(item, Metric):
            self.metrics.append(item)
        elif isinstance(item, Notice):
            self.notices.append(item)
        elif isinstance(item, EndRow):
            self.end_rows.append(item)
        elif isinstance(item, SummaryRow):
            self.summary_rows.append(item)
        elif isinstance(item, SlackOnlyRow):
            self.slack_only.append(item)
        elif isinstance(item, LimitRow):
            self.limits.append(item)
        elif isinstance(item, Unrecognised):
            self.unrecognised.append(item)
        elif isinstance(item, StaPath) and item.from_json:
            self.json_paths.append(item)
        else:  # a `-format short` path
            self.short += 1


def stasummary(args: ReportArgs, records: Mapping[str, Record]) -> Excerpt:
    """WNS, TNS and violating endpoints per group, corner, mode and path type; reported tns/wns
    lines, `-format end`/`summary` tables and notices as they are."""
    report = _Report()
    for item in report_rows(records["report"]):
        report.add(item)
    groups = [
        (key, stats, min(stats.worst.values(), key=SLACK))
        for key, stats in sorted(report.groups.items(), key=lambda item: _group_order(item[0]))
    ]
    paths = described(records["report"], (worst for _, _, worst in groups))
    lines = [_group_line(key, stats, paths[worst.line]) for key, stats, worst in groups]
    lines += _table_lines(report)
    lines += [make_line(notice.line, notice.text) for notice in report.notices[:MAX_NOTICES]]
    lines += [
        make_line(metric.line, f"{metric.name} {figure(metric.value)} (as reported)")
        for metric in report.metrics
    ]
    truncated = bool(report.truncated) or len(report.notices) > MAX_NOTICES
    return make_excerpt(
        _summary_of(report), sorted(lines, key=lambda line: line.number), truncated=truncated
    )


SLACK = attrgetter("slack")


def slack_of(path: Row | StaPath) -> float:
    """A constrained path's slack. Every path past `constrained` (or a diff's index, or a group's
    worst) has one; a path without one here is a reader's error, never a slack of 0."""
    if path.slack is None:
        raise ValueError(f"a path to {path.endpoint!r} without a slack was ranked")
    return path.slack


def _group_order(key: GroupKey) -> tuple[bytes, ...]:
    corner, mode, path_type, group = key
    return (group or b"", corner or b"", mode or b"", path_type or b"")


def _summary_of(report: _Report) -> str:
    paths = sum(stats.paths for stats in report.groups.values())
    if not (paths or report.truncated or report.unconstrained or report.metrics or report.notices
            or report.end_rows or report.summary_rows or report.slack_only or report.short
            or report.limits or report.json_paths):  # fmt: skip
        return "no report_checks content recognised: no paths, end/summary tables, tns/wns lines or notices" + _unread(report)  # fmt: skip
    endpoints = sum(len(stats.worst) for stats in report.groups.values())
    summary = (
        f"{paths} constrained paths to {endpoints} endpoint(s) in {len(report.groups)} "
        "group/corner/mode/path type(s); "
        + (
            "reported tns/wns shown as reported"
            if report.metrics
            else "no tns/wns lines: TNS is computed from the listed paths only"
        )
    )
    if report.unconstrained:
        summary += f"; {report.unconstrained} unconstrained path(s)"
    if report.truncated:
        summary += f"; {report.truncated} path(s) truncated in the report"
    if report.groups or report.end_rows or report.summary_rows:
        summary += "; TNS sums the negative slacks in exact decimal on the report's digits"
    if report.short:
        summary += f"; {report.short} path(s) in -format short (no slack reported)"
    if report.json_paths:
        summary += f"; {len(report.json_paths)} path(s) from -format json (seconds shown in ns; MET/VIOLATED from the slack's sign)"  # fmt: skip
    if report.notices:
        summary += f"; {len(report.notices)} warning/notice line(s)"
    return summary + _unread(report)


MAX_RANGES = 10


def _unread(report: _Report) -> str:
    """Where the report holds what no reader here understood (never dropped silently)."""
    if not report.unrecognised:
        return ""
    spans = [f"{item.first}" if item.first == item.last else f"{item.first}–{item.last}"
             for item in report.unrecognised[:MAX_RANGES]]  # fmt: skip
    more = "…" if len(report.unrecognised) > MAX_RANGES else ""
    count = sum(item.lines for item in report.unrecognised)
    return f"; {count} line(s) not recognised, at lines {', '.join(spans)}{more}"


def _group_line(key: GroupKey, stats: _Group, worst: StaPath) -> Line:
    """The line cited is the worst path's slack line."""
    corner, mode, path_type, group = (_text(part or b"-") for part in key)
    rows = stats.worst.values()
    violating = sum(row.status == b"VIOLATED" for row in rows)
    tns = negative_sum(row.slack for row in rows)
    where = f"group {group} corner {corner}" + (f" mode {mode}" if key[1] else "")
    text = (
        f"{where} type {path_type}: {stats.paths} paths to {len(stats.worst)} endpoints, "
        f"{violating} violating, WNS {figure(slack_of(worst))} at {worst.endpoint}, "
        f"TNS {figure(tns)} (listed paths)"
    )
    return make_line(worst.last_line, text)


def _table_lines(report: _Report) -> list[Line]:
    """One line per `-format end` table title (a hold table never beside a setup one), one for
    all `summary` rows, at the worst row; each `slack_only` row as reported."""
    tables: list[tuple[str, list[EndRow] | list[SummaryRow]]] = [
        (f"end table {title}" if title else "end table", rows)
        for title, rows in _grouped(report.end_rows, attrgetter("check")).items()
    ]
    tables.append(("summary table", report.summary_rows))
    lines = [_table_line(name, rows) for name, rows in tables if rows]
    for row in report.slack_only:
        text = f"slack_only table: group {row.group} slack {figure(row.slack)} (as reported)"
        lines.append(make_line(row.line, text))
    lines += _json_lines(report.json_paths)
    lines += [_limit_line(check, rows) for check, rows in _grouped(report.limits, attrgetter("check")).items()]  # fmt: skip
    return lines


T = TypeVar("T")
K = TypeVar("K")


def _grouped(items: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """The items by key, keys in the order they first appear."""
    groups: dict[K, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def _json_lines(paths: list[StaPath]) -> list[Line]:
    """One line per group and path type of the `-format json` paths, at the document's end."""
    lines = []
    graded = (path for path in paths if path.slack is not None)
    for key, rows in _grouped(graded, attrgetter("group", "path_type")).items():
        worst = min(rows, key=SLACK)
        violating = sum(path.status == "VIOLATED" for path in rows)
        tns = negative_sum(path.slack for path in rows)
        text = (
            f"json group {key[0]} type {key[1]}: {len(rows)} path(s), {violating} violating, "
            f"worst slack {figure(worst.slack or 0.0)} at {worst.endpoint}, TNS {figure(tns)} (json paths)"
        )
        lines.append(make_line(worst.last_line, text))
    return lines


def _limit_line(check: str, rows: list[LimitRow]) -> Line:
    """A `report_check_types` section: violations of its own kind, never mixed with paths."""
    violating = [row for row in rows if row.status == "VIOLATED"]
    graded = [row for row in rows if row.slack is not None]
    worst = min(graded, key=SLACK) if graded else rows[0]
    where = f"worst slack {figure(worst.slack)} at {worst.pin}" if worst.slack is not None else f"first at {worst.pin}"  # fmt: skip
    text = f"{check}: {len(rows)} pin(s), {len(violating)} violating, {where} (limit checks, as reported)"  # fmt: skip
    return make_line(worst.line, text)


def _table_line(name: str, rows: Sequence[EndRow | SummaryRow]) -> Line:
    worst = min(rows, key=SLACK)
    if all(row.status is not None for row in rows):
        violating = f"{sum(row.status == 'VIOLATED' for row in rows)} violating"
    else:
        violating = (
            f"{sum(row.slack < 0 for row in rows)} with negative slack (no MET/VIOLATED given)"
        )
    tns = negative_sum(row.slack for row in rows)
    text = (
        f"{name}: {len(rows)} row(s), {violating}, worst slack {figure(worst.slack)} at "
        f"{worst.endpoint}, TNS {figure(tns)} (table rows, counted apart from the paths)"
    )
    return make_line(worst.line, text)


def stapaths(args: PathsArgs, records: Mapping[str, Record]) -> Excerpt:
    """The `limit` worst paths, optionally of one group and one status."""
    group = None if args.group is None else encoded(args.group)
    status = None if args.status is None else encoded(args.status)
    matching = 0

    def selected() -> Iterator[Row]:
        nonlocal matching
        for row in constrained(records["report"]):
            if (group is None or row.group == group) and (status is None or row.status == status):
                matching += 1
                yield row

    worst = heapq.nsmallest(args.limit, selected(), key=slack_of)
    paths = described(records["report"], worst)
    lines = [make_line(row.line, describe_path(paths[row.line])) for row in worst]
    return make_excerpt(
        f"{len(worst)} of {matching} matching path(s), worst first",
        lines,
        truncated=matching > len(worst),
    )


def stapath(args: PathArgs, records: Mapping[str, Record]) -> Excerpt:
    """One path's report lines, with their line numbers: the worst of the paths of this type to
    the endpoint (in the corner and mode given, else in any), or the first if none has a slack."""
    record = records["report"]
    wanted = [encoded(value) for value in (args.corner, args.mode, args.path_type)]
    endpoint = encoded(args.endpoint)
    selected = [
        item
        for item in report_rows(record)
        if isinstance(item, Row)
        and all(
            want is None or have == want
            for have, want in zip(KEY_FIELDS(item.key), wanted, strict=False)
        )
        and item.endpoint.startswith(endpoint)
    ]
    matching = [row for row in selected if row.endpoint == endpoint] or _pins_of(
        record, args.endpoint, selected
    )
    if not matching:
        return make_excerpt(f"no {_selection(args)} ends at {args.endpoint!r}", (), False)
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
    return make_excerpt(
        f"{chosen}{describe_path(found)} (lines {found.first_line}–{found.last_line})",
        lines,
        truncated=last < found.last_line,
    )


def _pins_of(record: Record, instance: str, rows: list[Row]) -> list[Row]:
    """The rows whose endpoint is a pin of `instance` (its `Endpoint:` line names it): asked for
    an instance, `stapath` shows the worst of its pins, never a pinless endpoint below it."""
    prefix = encoded(instance) + b"/"
    candidates = [row for row in rows if row.endpoint.startswith(prefix)
                  and b"/" not in row.endpoint[len(prefix):]]  # fmt: skip
    paths = described(record, candidates)
    return [row for row in candidates if paths[row.line].instance == instance]


KEY_FIELDS = itemgetter(0, 1, 2, 4)
"""A row key's corner, mode, path type and endpoint (in `stapath`'s order of arguments); also how
`stadiff` finds an endpoint whose path lost its constraint (and with it its group)."""


def _selection(args: PathArgs) -> str:
    given = [f"{name} {value!r}" for name, value in (("corner", args.corner), ("mode", args.mode)) if value]  # fmt: skip
    return f"{args.path_type} path" + (f" in {' and '.join(given)}" if given else "")


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def describe_path(path: StaPath) -> str:
    state = (
        "unconstrained"
        if path.unconstrained
        else "truncated"
        if path.truncated
        else f"slack {figure(slack_of(path))} ({path.status})"
    )
    where = " ".join(part for part in (path.group, path.corner, path.mode, path.path_type) if part)
    return f"{path.endpoint} · {state} · {where} · from {path.startpoint}"
