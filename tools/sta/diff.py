"""`stadiff`: two approved STA reports compared endpoint by endpoint.

Each report is scanned once into an index of the worst constrained path of each endpoint (corner,
mode, path type, group, endpoint); the indexes are compared with the collector paused, and only the
changes shown are described by the line parser, from their rows' offsets.
"""

from __future__ import annotations

import gc
import heapq
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from operator import itemgetter
from typing import Annotated

from pydantic import Field

from scenario.registry import Record
from tools.args import StaReportId, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.sta.figures import DIGITS, difference, figure
from tools.sta.items import (
    EndRow,
    LimitRow,
    ReportedTable,
    SlackOnlyRow,
    StaPath,
    SummaryRow,
)
from tools.sta.paths import KEY_FIELDS
from tools.sta.reading import Reading, over_read, unknowns
from tools.sta.scan import Row
from tools.sta.summary import describe_path, described, report_rows, slack_of


class DiffArgs(ToolArgs):
    before: StaReportId
    after: StaReportId
    limit: Annotated[int, Field(ge=1, le=200)] = 20


RANKS = (("flipped",), ("unconstrained",), ("added", "removed"), ("changed",))
"""Flips first, then endpoints that lost their constraint, then endpoints added or removed, then
slack changes, worst first within each."""
KINDS = tuple(kind for rank in RANKS for kind in rank)

Change = tuple[float, Row | None, Row | None]
"""Δslack (or the slack itself for an endpoint added, removed or now unconstrained), the old row,
the new row."""
Key = tuple[bytes | None, ...]
Index = dict[Key, Row]


def _index(
    record: Record, skipped: Counter[str], reading: Reading
) -> tuple[Index, Index, set[Key]]:
    """The worst constrained path of each endpoint (corner, mode, path type, group, endpoint),
    the first unconstrained path of each endpoint by corner, mode and path type (the group of
    an unconstrained path is `(none)`, not the group it had when it was constrained), and the
    endpoints of paths cut off before their slack. What is not a text path is counted in
    `skipped`, and the lines not read kept in `reading`, to be said."""
    index: Index = {}
    loose: Index = {}
    cut: set[Key] = set()
    for row in report_rows(record):
        if type(row) is not Row:
            if not reading.add(row) and (kind := _not_compared(row)):
                skipped[kind] += 1
            continue
        if row.slack is None:
            if row.unconstrained:
                loose.setdefault(KEY_FIELDS(row.key), row)
            else:
                skipped["truncated path(s)"] += 1
                cut.add(row.key)
            continue
        kept = index.get(row.key)
        if kept is None or row.slack < slack_of(kept):
            index[row.key] = row
    return index, loose, cut


def _not_compared(item: object) -> str | None:
    """What kind of content a diff does not compare (None for figures it has no use for)."""
    if isinstance(item, StaPath):
        return "json path(s)" if item.from_json else "short path(s)"
    if isinstance(item, (EndRow, SummaryRow, SlackOnlyRow)):
        return "table row(s)"
    if isinstance(item, LimitRow):
        return "limit check(s)"
    return "table(s) of the report's own figures" if isinstance(item, ReportedTable) else None


def _skipped_note(skipped: Mapping[str, Counter[str]]) -> str:
    parts = [
        f"{side}: " + ", ".join(f"{count} {kind}" for kind, count in counts.items())
        for side, counts in skipped.items()
        if counts
    ]
    return "; not compared (only text paths are): " + "; ".join(parts) if parts else ""


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
    """Endpoints flipped, now unconstrained, added, removed or changed between two approved STA
    reports.

    Endpoints matched by corner, mode, path type, group and endpoint (the worst path of each):
    added, removed, flipped, slack changed — with the change split into Δarrival and Δrequired.
    Line numbers are the after report's, except for removed endpoints (the before report's);
    each line says which."""
    skipped: dict[str, Counter[str]] = {"before": Counter(), "after": Counter()}
    readings = {"before": Reading(), "after": Reading()}
    with _collector_paused():
        before, _, before_cut = _index(records["before"], skipped["before"], readings["before"])
        after, after_loose, after_cut = _index(
            records["after"], skipped["after"], readings["after"]
        )
        for key in before_cut | after_cut:  # cut off on either side: not compared, and said
            before.pop(key, None)
            after.pop(key, None)
        changes = _changes(before, after, after_loose)
    shown = _shown(changes, args.limit)
    old_paths = described(records["before"], (old for _, _, old, _ in shown if old is not None))
    new_paths = described(records["after"], (new for _, _, _, new in shown if new is not None))
    lines = [
        _diff_line(kind, old and old_paths[old.line], new and new_paths[new.line])
        for kind, _, old, new in shown
    ]
    summary = ", ".join(f"{len(changes[kind])} {kind}" for kind in KINDS)
    summary += f"; showing {len(shown)}"
    summary += "; Δ = after − before, exact decimal on the reports' digits" if shown else ""
    truncated = len(shown) < sum(map(len, changes.values()))
    return make_excerpt(
        over_read(summary + _skipped_note(skipped), readings),
        lines,
        truncated,
        unknowns(readings, truncated),
    )


def _changes(before: Index, after: Index, after_loose: Index) -> dict[str, list[Change]]:
    """Every change, by kind."""
    changes: dict[str, list[Change]] = {kind: [] for kind in KINDS}
    flipped, added, changed = (
        changes["flipped"].append,
        changes["added"].append,
        changes["changed"].append,
    )
    matched = before.get
    for key, new in after.items():
        old = matched(key)
        if old is None:
            added((slack_of(new), None, new))
        elif old.status != new.status:
            flipped((round(slack_of(new) - slack_of(old), DIGITS), old, new))  # ranks; shown exact
        elif (delta := round(slack_of(new) - slack_of(old), DIGITS)) != 0 or old.start != new.start:
            changed((delta, old, new))
    for key, old in before.items():
        if key not in after:
            loose = after_loose.get(KEY_FIELDS(key))
            kind = "removed" if loose is None else "unconstrained"
            changes[kind].append((slack_of(old), old, loose))
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


def _diff_line(kind: str, old: StaPath | None, new: StaPath | None) -> Line:
    if kind == "added" and new is not None:
        return make_line(new.first_line, f"[after] added: {describe_path(new)}")
    if kind == "removed" and old is not None:
        return make_line(old.first_line, f"[before] removed: {describe_path(old)}")
    if old is None or new is None:
        raise ValueError(f"a {kind} change without both its paths")
    if kind == "unconstrained":
        text = f"[after] now unconstrained: {describe_path(new)}; was slack {figure(slack_of(old))} ({old.status})"
        return make_line(new.first_line, text)
    return make_line(new.first_line, f"[after] {_change(old, new)}")


def _change(old: StaPath, new: StaPath) -> str:
    kind = f"flipped {old.status}→{new.status}" if old.status != new.status else "changed"
    arrival, required = _delta(old.arrival, new.arrival), _delta(old.required, new.required)
    start = (
        f"; startpoint {old.startpoint} → {new.startpoint}"
        if old.startpoint != new.startpoint
        else ""
    )
    return (
        f"{kind}: {new.endpoint} ({new.group} {new.corner or '-'} {new.path_type}) slack {figure(slack_of(old))} → "
        f"{figure(slack_of(new))} (Δ {figure(difference(slack_of(new), slack_of(old)), signed=True)}: Δarrival {arrival}, "
        f"Δrequired {required}){start}"
    )


def _delta(old: float | None, new: float | None) -> str:
    """A time's change, or why it is unknown: a layout that prints no such line (Genus prints no
    data arrival time of its own) gives none, never a change of 0."""
    if old is None or new is None:
        return "unknown (not printed as such)"
    return figure(difference(new, old), signed=True)
