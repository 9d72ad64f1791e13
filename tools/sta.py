"""STA evidence tools over approved `report_checks` reports: summary, paths, one path, a diff.

Evidence lookup only: nothing here runs an EDA command. Reports are streamed through the parser in
`tools/stareport.py`; `stapaths` keeps only the `limit` worst paths, and `stadiff` indexes the
endpoints of one report (not their path lines) to compare the other against it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.lines import iter_lines
from tools.records import Record, open_record
from tools.stareport import Metric, StaPath, parse

MAX_PATH_LINES = 150


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


class DiffArgs(ToolArgs):
    before: RecordId
    after: RecordId
    limit: Annotated[int, Field(ge=1, le=200)] = 20


def report_items(record: Record) -> Iterator[StaPath | Metric]:
    with open_record(record) as stream:
        lines = ((number, raw.decode("utf-8", "replace")) for number, raw in iter_lines(stream))
        yield from (item for item in parse(lines) if isinstance(item, StaPath | Metric))


def constrained(record: Record) -> Iterator[StaPath]:
    return (
        item
        for item in report_items(record)
        if isinstance(item, StaPath) and item.slack is not None
    )


@dataclass
class _Group:
    paths: int = 0
    violating: int = 0
    tns: float = 0.0
    worst: StaPath | None = None

    def add(self, path: StaPath) -> None:
        self.paths += 1
        self.violating += path.status == "VIOLATED"
        self.tns += min(path.slack, 0.0)
        if self.worst is None or path.slack < self.worst.slack:
            self.worst = path


def stasummary(args: ReportArgs, records: Mapping[str, Record]) -> Excerpt:
    """WNS, TNS and violating endpoints per group and corner; reported tns/wns lines as they are."""
    groups: dict[tuple[str, str], _Group] = {}
    metrics: list[Metric] = []
    truncated = 0
    for item in report_items(records["report"]):
        if isinstance(item, Metric):
            metrics.append(item)
        elif item.truncated:
            truncated += 1
        elif item.slack is not None:
            groups.setdefault((item.group or "-", item.corner or "-"), _Group()).add(item)
    lines = [
        make_line(
            stats.worst.last_line,
            f"group {group} corner {corner}: {stats.paths} paths, {stats.violating} violating, "
            f"WNS {stats.worst.slack:.2f} at {stats.worst.endpoint}, TNS {stats.tns:.2f} (listed paths)",
        )
        for (group, corner), stats in sorted(groups.items())
    ]
    lines += [
        make_line(metric.line, f"{metric.name} {metric.value:.2f} (as reported)")
        for metric in metrics
    ]
    source = (
        "reported tns/wns shown as reported"
        if metrics
        else "no tns/wns lines: TNS is computed from the listed paths only"
    )
    summary = f"{sum(stats.paths for stats in groups.values())} constrained paths in {len(groups)} group/corner(s); {source}"
    if truncated:
        summary += f"; {truncated} path(s) truncated in the report"
    return make_excerpt(
        summary, sorted(lines, key=lambda line: line.number), truncated=bool(truncated)
    )


def _group_line(group: str, corner: str, stats: _Group) -> Line:
    text = (
        f"group {group} corner {corner}: {stats.paths} paths, {stats.violating} violating, "
        f"WNS {stats.worst.slack:.2f} at {stats.worst.endpoint}, TNS {stats.tns:.2f} (listed paths)"
    )
    return make_line(stats.worst.last_line, text)


def stapaths(args: PathsArgs, records: Mapping[str, Record]) -> Excerpt:
    """The `limit` worst paths, optionally of one group and one status."""
    selected = (
        path
        for path in constrained(records["report"])
        if (args.group is None or path.group == args.group)
        and (args.status is None or path.status == args.status)
    )
    matching = 0

    def counted() -> Iterator[StaPath]:
        nonlocal matching
        for path in selected:
            matching += 1
            yield path

    worst = heapq.nsmallest(args.limit, counted(), key=lambda path: path.slack)
    lines = [make_line(path.first_line, _describe(path)) for path in worst]
    return make_excerpt(
        f"{len(worst)} of {matching} matching path(s), worst first",
        lines,
        truncated=matching > len(worst),
    )


def stapath(args: PathArgs, records: Mapping[str, Record]) -> Excerpt:
    """One path's report lines, with their line numbers."""
    record = records["report"]
    found = next(
        (
            path
            for path in report_items(record)
            if isinstance(path, StaPath)
            and path.endpoint == args.endpoint
            and path.path_type == args.path_type
        ),
        None,
    )
    if found is None:
        return make_excerpt(f"no {args.path_type} path ends at {args.endpoint!r}", (), False)
    last = min(found.last_line, found.first_line + MAX_PATH_LINES - 1)
    with open_record(record) as stream:
        lines = [
            make_line(number, raw)
            for number, raw in iter_lines(stream)
            if found.first_line <= number <= last
        ]
    return make_excerpt(
        f"{_describe(found)} (lines {found.first_line}–{found.last_line})",
        lines,
        truncated=last < found.last_line,
    )


def _key(path: StaPath) -> tuple[str, str, str, str, str]:
    return (
        path.corner or "-",
        path.mode or "-",
        path.path_type or "-",
        path.group or "-",
        path.endpoint,
    )


RANK = {"flipped": 0, "added": 1, "removed": 1, "changed": 2}
"""Flips first, then endpoints added or removed, then slack changes, worst first within each."""


def stadiff(args: DiffArgs, records: Mapping[str, Record]) -> Excerpt:
    """Endpoints matched by corner, mode, path type, group and endpoint: added, removed, flipped,
    slack changed — with the change split into Δarrival and Δrequired. Line numbers are the after
    report's, except for removed endpoints (the before report's); each line says which."""
    before = {_key(path): path for path in constrained(records["before"])}
    changes: list[tuple[str, float, tuple[int, str]]] = []  # lines are made only for those shown
    for path in constrained(records["after"]):
        old = before.pop(_key(path), None)
        if old is None:
            changes.append(
                (
                    "added",
                    path.slack,
                    (path.first_line, f"[after] added: {_describe(path)}"),
                )
            )
        elif (delta := round(path.slack - old.slack, 2)) != 0 or old.startpoint != path.startpoint:
            kind = "flipped" if old.status != path.status else "changed"
            changes.append((kind, delta, (path.first_line, f"[after] {_change(old, path, delta)}")))
    for path in before.values():
        changes.append(
            (
                "removed",
                path.slack,
                (path.first_line, f"[before] removed: {_describe(path)}"),
            )
        )
    counts = {
        kind: sum(change[0] == kind for change in changes)
        for kind in ("flipped", "added", "removed", "changed")
    }
    shown = heapq.nsmallest(args.limit, changes, key=lambda change: (RANK[change[0]], change[1]))
    summary = (
        ", ".join(f"{count} {kind}" for kind, count in counts.items()) + f"; showing {len(shown)}"
    )
    return make_excerpt(
        summary, [make_line(*line) for _, _, line in shown], truncated=len(shown) < len(changes)
    )


def _change(old: StaPath, new: StaPath, delta: float) -> str:
    kind = f"flipped {old.status}→{new.status}" if old.status != new.status else "changed"
    arrival = (new.arrival or 0.0) - (old.arrival or 0.0)
    required = (new.required or 0.0) - (old.required or 0.0)
    start = (
        f"; startpoint {old.startpoint} → {new.startpoint}"
        if old.startpoint != new.startpoint
        else ""
    )
    return (
        f"{kind}: {new.endpoint} ({new.group} {new.corner or '-'} {new.path_type}) slack {old.slack:.2f} → "
        f"{new.slack:.2f} (Δ {delta:+.2f}: Δarrival {arrival:+.2f}, Δrequired {required:+.2f}){start}"
    )


def _describe(path: StaPath) -> str:
    state = (
        "unconstrained"
        if path.unconstrained
        else "truncated"
        if path.truncated
        else f"slack {path.slack:.2f} ({path.status})"
    )
    where = " ".join(part for part in (path.group, path.corner, path.mode, path.path_type) if part)
    return f"{path.endpoint} · {state} · {where} · from {path.startpoint}"
