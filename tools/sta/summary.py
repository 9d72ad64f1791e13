"""STA evidence over approved `report_checks` reports: `stasummary`, and what the other STA tools
share of a report, its rows and their paths (`stapaths` and `stapath` are `tools/sta/paths.py`; the
diff of two reports is `tools/sta/diff.py`).

Evidence lookup only: nothing here runs an EDA command. Reports are streamed through the scan in
`tools/sta/scan.py`; what a tool shows is read by the line parser from the offsets of the rows it
shows. A report's own figures are shown beside the listing's (`tools/sta/counts.py`),
its tables as `tools/sta/table_lines.py` says them; every line is either read or inside a range
said unread.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter

from scenario.reading import open_record
from scenario.registry import Record
from tools.args import StaReportId, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.sta.counts import count_text, metric_text
from tools.sta.figures import figure, negative_sum
from tools.sta.items import (
    EndRow,
    Extent,
    LimitRow,
    Metric,
    Notice,
    ReportCount,
    ReportedTable,
    SlackOnlyRow,
    StaPath,
    SummaryRow,
    Unrecognised,
)
from tools.sta.reading import (
    MAX_RANGES,
    Reading,
    ranges,
    spans_of,
    unknowns,
    widened_spans,
)
from tools.sta.scan import Row, Scanned, describe, scan
from tools.sta.table_lines import SLACK, table_lines

MAX_NOTICES = 10
"""Warnings, errors and `No paths found.` lines quoted by `stasummary`; the rest are counted."""
MAX_FIGURES = 60
"""The report's own figures and counts quoted by `stasummary`; the rest are counted."""
MAX_SHORT = 20
"""`-format short` paths listed by `stasummary`; the rest are counted."""


class ReportArgs(ToolArgs):
    report: StaReportId
    """The exact id of an approved `sta_report` record."""


def report_rows(record: Record) -> Iterator[Scanned]:
    with open_record(record) as stream:
        yield from scan(stream)


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
    counts: list[ReportCount] = field(default_factory=list)
    reported: list[ReportedTable] = field(default_factory=list)
    reading: Reading = field(default_factory=Reading)
    """The report's length and the lines not recognised, every one inside a range said."""
    truncated: int = 0
    unconstrained: int = 0
    short: int = 0
    """`-format short` paths: complete as reported, with no slack to count."""
    unread_tables: int = 0
    """Of them, headers followed by lines not recognised: their slack unknown as not read."""
    short_paths: list[StaPath] = field(default_factory=list)
    """The first `MAX_SHORT` of them."""
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
        elif isinstance(item, ReportCount):
            self.counts.append(item)
        elif isinstance(item, ReportedTable):
            self.reported.append(item)
        elif isinstance(item, (Unrecognised, Extent)):
            self.reading.add(item)
        elif item.from_json:
            self.json_paths.append(item)
        else:  # a `-format short` path
            self.short += 1
            self.unread_tables += item.table_unread
            if len(self.short_paths) < MAX_SHORT:
                self.short_paths.append(item)

    def worst(self) -> dict[tuple[bytes | None, bytes | None], dict[bytes, Row]]:
        """Each endpoint's worst listed path by corner and path type (over groups and modes)."""
        found: dict[tuple[bytes | None, bytes | None], dict[bytes, Row]] = {}
        for (corner, _, path_type, _), stats in self.groups.items():
            kept = found.setdefault((corner, path_type), {})
            for endpoint, row in stats.worst.items():
                if endpoint not in kept or slack_of(row) < slack_of(kept[endpoint]):
                    kept[endpoint] = row
        return found


def stasummary(args: ReportArgs, records: Mapping[str, Record]) -> Excerpt:
    """WNS, TNS and violating endpoints per path group, corner, mode and path type of an approved
    STA report, with its tns/wns lines, end/summary tables and warnings as reported.

    The tables are `-format end`/`summary`'s and the warnings the report's notices, as they are."""
    report = _Report()
    for item in report_rows(records["report"]):
        report.add(item)
    groups = [
        (key, stats, min(stats.worst.values(), key=SLACK))
        for key, stats in sorted(report.groups.items(), key=lambda item: _group_order(item[0]))
    ]
    paths = described(records["report"], (worst for _, _, worst in groups))
    lines = [_group_line(key, stats, paths[worst.line]) for key, stats, worst in groups]
    lines += table_lines(report)
    lines += [make_line(notice.line, notice.text) for notice in report.notices[:MAX_NOTICES]]
    figures, disagreeing = _figure_lines(report)
    lines += figures
    lines += [make_line(path.first_line, describe_path(path)) for path in report.short_paths]
    truncated = (
        bool(report.truncated)
        or len(report.notices) > MAX_NOTICES
        or len(report.metrics) + len(report.counts) > MAX_FIGURES
        or report.short > MAX_SHORT
    )
    summary = _summary_of(report, disagreeing)
    told = unknowns({"report": report.reading}, truncated)
    return make_excerpt(summary, sorted(lines, key=lambda line: line.number), truncated, told)


def _figure_lines(report: _Report) -> tuple[list[Line], list[int]]:
    """The report's own figures and counts (the first `MAX_FIGURES`), each beside what the
    listing gives in its scope; and the lines where the two disagree."""
    worst = report.worst()
    said: list[tuple[int, tuple[str, bool | None]]] = [
        (metric.line, metric_text(metric, worst)) for metric in report.metrics
    ]
    said += [(count.line, count_text(count, worst, report.limits)) for count in report.counts]
    said.sort(key=itemgetter(0))
    lines = [make_line(number, text) for number, (text, _) in said[:MAX_FIGURES]]
    return lines, [number for number, (_, agree) in said if agree is False]


def slack_of(path: Row | StaPath) -> float:
    """A constrained path's slack. Every path past `constrained` (or a diff's index, or a group's
    worst) has one; a path without one here is a reader's error, never a slack of 0."""
    if path.slack is None:
        raise ValueError(f"a path to {path.endpoint!r} without a slack was ranked")
    return path.slack


def _group_order(key: GroupKey) -> tuple[bytes, ...]:
    corner, mode, path_type, group = key
    return (group or b"", corner or b"", mode or b"", path_type or b"")


def _summary_of(report: _Report, disagreeing: list[int]) -> str:
    paths = sum(stats.paths for stats in report.groups.values())
    if not (
        paths
        or report.truncated
        or report.unconstrained
        or report.metrics
        or report.notices
        or report.end_rows
        or report.summary_rows
        or report.slack_only
        or report.short
        or report.limits
        or report.json_paths
        or report.counts
        or report.reported
    ):
        return (
            "no report_checks content recognised: no paths, end/summary tables, tns/wns lines or notices"
            + report.reading.said()
        )
    endpoints = sum(len(stats.worst) for stats in report.groups.values())
    summary = (
        f"{paths} constrained paths to {endpoints} endpoint(s) in {len(report.groups)} "
        "group/corner/mode/path type(s)"
    )
    if report.metrics:
        summary += "; reported tns/wns shown as reported, beside the listed paths' own"
    elif report.groups:
        summary += "; no tns/wns lines: TNS is computed from the listed paths only"
    if report.unconstrained:
        summary += f"; {report.unconstrained} unconstrained path(s)"
    if report.truncated:
        summary += f"; {report.truncated} path(s) truncated in the report"
    if report.groups or report.end_rows or report.summary_rows:
        summary += "; TNS sums the negative slacks in exact decimal on the report's digits"
    listed = f" (the first {MAX_SHORT} listed)" if report.short > MAX_SHORT else ""
    if short := report.short - report.unread_tables:
        summary += (
            f"; {short} path(s) in -format short: startpoint, endpoint, group and type "
            "read; slack and arrival not printed, so unknown" + listed
        )
    if report.unread_tables:
        summary += (
            f"; {report.unread_tables} path header(s) followed by lines not recognised: "
            "startpoint, endpoint, group and type read; slack not read, so unknown" + listed
        )
    if report.counts:
        summary += f"; {len(report.counts)} count(s) the report prints of itself, shown beside the listing's"
    if report.reported:
        summary += (
            f"; {len(report.reported)} table(s) of the report's own figures, shown as reported"
        )
    if disagreeing:
        at, widened = widened_spans(spans_of(disagreeing), MAX_RANGES)
        joined = " (ranges joined: not every line inside them disagrees)" if widened else ""
        summary += f"; {len(disagreeing)} of the report's own figures DISAGREE with its listing, at {ranges(at)}{joined}"
    if len(report.metrics) + len(report.counts) > MAX_FIGURES:
        summary += f"; the first {MAX_FIGURES} of {len(report.metrics) + len(report.counts)} reported figures shown"
    if report.json_paths:
        summary += f"; {len(report.json_paths)} path(s) from -format json (seconds shown in ns; MET/VIOLATED from the slack's sign)"
    if report.notices:
        summary += f"; {len(report.notices)} warning/notice line(s)"
    return summary + report.reading.said()


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


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def describe_path(path: StaPath) -> str:
    state = (
        "unconstrained"
        if path.unconstrained
        else "truncated"
        if path.truncated
        else "slack unknown (the lines after its header were not read)"
        if path.table_unread
        else "slack and arrival unknown (-format short prints neither)"
        if path.short
        else f"slack {figure(slack_of(path))} ({path.status})"
    )
    where = " ".join(part for part in (path.group, path.corner, path.mode, path.path_type) if part)
    return f"{path.endpoint} · {state} · {where} · from {path.startpoint}"
