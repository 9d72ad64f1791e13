"""STA evidence tools over approved `report_checks` reports: summary, paths, one path, a diff.

Evidence lookup only: nothing here runs an EDA command. Reports are streamed through the scan in
`tools/stascan.py`; `stapaths` keeps only the `limit` worst rows, `stadiff` indexes the worst row of
each endpoint of both reports, and what a tool shows is read by the line parser from the offsets of
the rows it shows.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import Annotated, Literal

from pydantic import Field

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.lines import iter_lines
from tools.records import Record, open_record
from tools.stareport import Metric, StaPath
from tools.stascan import Row, describe, encoded, scan

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


def report_rows(record: Record) -> Iterator[Row | Metric]:
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


@dataclass
class _Group:
    paths: int = 0
    violating: int = 0
    tns: float = 0.0
    worst: Row | None = None

    def add(self, row: Row) -> None:
        self.paths += 1
        self.violating += row.status == b"VIOLATED"
        self.tns += min(row.slack, 0.0)
        if self.worst is None or row.slack < self.worst.slack:
            self.worst = row


def stasummary(args: ReportArgs, records: Mapping[str, Record]) -> Excerpt:
    """WNS, TNS and violating endpoints per group and corner; reported tns/wns lines as they are."""
    groups: dict[tuple[bytes, bytes], _Group] = {}
    metrics: list[Metric] = []
    truncated = 0
    for item in report_rows(records["report"]):
        if isinstance(item, Metric):
            metrics.append(item)
        elif item.truncated:
            truncated += 1
        elif item.slack is not None:
            key = (item.group or b"-", item.corner or b"-")
            (groups.get(key) or groups.setdefault(key, _Group())).add(item)
    worst = described(records["report"], (stats.worst for stats in groups.values()))
    lines = [
        _group_line(_text(group), _text(corner), stats, worst[stats.worst.line])
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


def _group_line(group: str, corner: str, stats: _Group, worst: StaPath) -> Line:
    """The line cited is the worst path's slack line."""
    text = (
        f"group {group} corner {corner}: {stats.paths} paths, {stats.violating} violating, "
        f"WNS {worst.slack:.2f} at {worst.endpoint}, TNS {stats.tns:.2f} (listed paths)"
    )
    return make_line(worst.last_line, text)


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

    worst = heapq.nsmallest(args.limit, selected(), key=lambda row: row.slack)
    paths = described(records["report"], worst)
    lines = [make_line(row.line, _describe(paths[row.line])) for row in worst]
    return make_excerpt(
        f"{len(worst)} of {matching} matching path(s), worst first",
        lines,
        truncated=matching > len(worst),
    )


def stapath(args: PathArgs, records: Mapping[str, Record]) -> Excerpt:
    """One path's report lines, with their line numbers."""
    record = records["report"]
    endpoint, path_type = encoded(args.endpoint), encoded(args.path_type)
    row = next(
        (
            item
            for item in report_rows(record)
            if isinstance(item, Row) and item.endpoint == endpoint and item.path_type == path_type
        ),
        None,
    )
    if row is None:
        return make_excerpt(f"no {args.path_type} path ends at {args.endpoint!r}", (), False)
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
    return make_excerpt(
        f"{_describe(found)} (lines {found.first_line}–{found.last_line})",
        lines,
        truncated=last < found.last_line,
    )


RANKS = (("flipped",), ("added", "removed"), ("changed",))
"""Flips first, then endpoints added or removed, then slack changes, worst first within each."""
KINDS = tuple(kind for rank in RANKS for kind in rank)

Change = tuple[float, Row | None, Row | None]
"""Δslack (or the slack itself for an added or removed endpoint), the old row, the new row."""


def _index(record: Record) -> dict[tuple[bytes | None, ...], Row]:
    """The worst constrained path of each endpoint (corner, mode, path type, group, endpoint)."""
    index: dict[tuple[bytes | None, ...], Row] = {}
    for row in constrained(record):
        kept = index.get(row.key)
        if kept is None or row.slack < kept.slack:
            index[row.key] = row
    return index


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the indexes are built and compared: rows and changes are
    tuples of bytes and numbers, which make no cycles, yet each collection walks the indexes
    again (a third of a 100k-path diff's time). The collector is on again afterwards if it was
    on before (it is process-wide: other threads meanwhile only collect later)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def stadiff(args: DiffArgs, records: Mapping[str, Record]) -> Excerpt:
    """Endpoints matched by corner, mode, path type, group and endpoint (the worst path of each):
    added, removed, flipped, slack changed — with the change split into Δarrival and Δrequired.
    Line numbers are the after report's, except for removed endpoints (the before report's);
    each line says which."""
    with _collector_paused():
        changes = _changes(_index(records["before"]), _index(records["after"]))
    shown = _shown(changes, args.limit)
    old_paths = described(records["before"], (old for _, _, old, _ in shown if old is not None))
    new_paths = described(records["after"], (new for _, _, _, new in shown if new is not None))
    lines = [
        _diff_line(kind, delta, old and old_paths[old.line], new and new_paths[new.line])
        for kind, delta, old, new in shown
    ]
    summary = ", ".join(f"{len(changes[kind])} {kind}" for kind in KINDS)
    return make_excerpt(
        summary + f"; showing {len(shown)}",
        lines,
        truncated=len(shown) < sum(map(len, changes.values())),
    )


def _changes(
    before: dict[tuple[bytes | None, ...], Row], after: dict[tuple[bytes | None, ...], Row]
) -> dict[str, list[Change]]:
    """Every change, by kind."""
    changes: dict[str, list[Change]] = {kind: [] for kind in KINDS}
    flipped, added, changed = changes["flipped"].append, changes["added"].append, changes["changed"].append  # fmt: skip
    matched = before.get
    for key, new in after.items():
        old = matched(key)
        if old is None:
            added((new.slack, None, new))
        elif old.status != new.status:
            flipped((round(new.slack - old.slack, 2), old, new))
        elif (delta := round(new.slack - old.slack, 2)) != 0 or old.start != new.start:
            changed((delta, old, new))
    changes["removed"] = [(old.slack, old, None) for key, old in before.items() if key not in after]
    return changes


def _shown(
    changes: dict[str, list[Change]], limit: int
) -> list[tuple[str, float, Row | None, Row | None]]:
    """The first `limit` changes in rank order: flips, then added or removed together, then
    changed, each worst first (ties in report order); a rank is sorted only if it is reached."""
    shown: list[tuple[str, float, Row | None, Row | None]] = []
    for kinds in RANKS:
        room = limit - len(shown)
        if room <= 0:
            break
        tagged = ((kind, *change) for kind in kinds for change in changes[kind])
        shown += heapq.nsmallest(room, tagged, key=_DELTA)
    return shown


_DELTA = itemgetter(1)


def _diff_line(kind: str, delta: float, old: StaPath | None, new: StaPath | None) -> Line:
    if kind == "added":
        return make_line(new.first_line, f"[after] added: {_describe(new)}")
    if kind == "removed":
        return make_line(old.first_line, f"[before] removed: {_describe(old)}")
    return make_line(new.first_line, f"[after] {_change(old, new, delta)}")


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


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
