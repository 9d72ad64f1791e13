"""The report's own figures beside what its listing holds.

OpenROAD and OpenLane print figures of the whole design (`tns max -12.3`, `setup violation count
68`, `max fanout violation count 5`) next to listings that print only some of it (one path per
group by default). Each figure is shown as reported, beside what Warrant counts from the paths
and rows listed in the same scope (path type, corner); when the two differ the line says so with
both numbers. Neither replaces the other: the listing may be shorter than the design.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal

from tools.sta.figures import difference, figure, negative_sum
from tools.sta.items import LimitRow, Metric, ReportCount
from tools.sta.names import encoded
from tools.sta.scan import Row

Worst = Mapping[tuple[bytes | None, bytes | None], Mapping[bytes, Row]]
"""(corner, path type) → each listed endpoint's worst constrained path there."""


def endpoints(worst: Worst, path_type: str, corner: str | None) -> dict[bytes, Row]:
    """Each endpoint's worst listed path of this type, in this corner or (None) in any: OpenSTA
    counts an endpoint once, at its worst slack."""
    kind, where = encoded(path_type), encoded(corner)
    found: dict[bytes, Row] = {}
    for (row_corner, row_kind), rows in worst.items():
        if row_kind != kind or (where is not None and row_corner != where):
            continue
        for endpoint, row in rows.items():
            kept = found.get(endpoint)
            if kept is None or _slack(row) < _slack(kept):
                found[endpoint] = row
    return found


def metric_text(metric: Metric, worst: Worst) -> tuple[str, bool | None]:
    """The figure as reported and, where paths of its type are listed, Warrant's own figure from
    them; True/False whether they agree, None when there was nothing to compare."""
    text = f"{metric.name} {figure(metric.value)} (as reported)"
    if metric.path_type is None:
        return text, None
    rows = endpoints(worst, metric.path_type, metric.corner)
    if not rows:
        return text, None
    label, own = _own_figure(metric.name, [_slack(row) for row in rows.values()])
    agree = difference(metric.value, float(own)) == 0
    scope = _scope(metric.path_type + " paths", metric.corner)
    verdict = (
        "agrees" if agree else f"DISAGREES (report {figure(metric.value)}, listed {figure(own)})"
    )
    return f"{text}; listed {scope} give {label} {figure(own)}: {verdict}", agree


def _own_figure(name: str, slacks: list[float]) -> tuple[str, Decimal | float]:
    if name.startswith("tns"):
        return "TNS", negative_sum(slacks)
    if name.startswith("wns"):
        return "WNS", min(0.0, *slacks)
    return "worst slack", min(slacks)


def count_text(
    count: ReportCount, worst: Worst, limits: Iterable[LimitRow]
) -> tuple[str, bool | None]:
    """The count as reported, in its corner, beside the violating endpoints (setup, hold) or
    pins or nets (slew, capacitance, fanout) the listing shows in the same scope."""
    text = f"{count.text} (as reported{_count_scope(count)})"
    if count.kind in ("setup", "hold"):
        path_type = "max" if count.kind == "setup" else "min"
        rows = endpoints(worst, path_type, count.corner)
        if not rows:
            return f"{text}; no {path_type} paths are listed to compare it with", None
        own = sum(row.status == b"VIOLATED" for row in rows.values())
        listed = (
            f"listed {_scope(path_type + ' paths', count.corner)} show {own} violating endpoint(s)"
        )
    else:
        rows_of = [
            row
            for row in limits
            if row.check == count.kind
            and row.status == "VIOLATED"
            and (count.corner is None or row.corner == count.corner)
        ]
        own = len({row.pin for row in rows_of})
        element = rows_of[0].element if rows_of else "pin"  # DC's design rule rows name nets
        scope = _scope(count.kind + " rows", count.corner)
        listed = f"listed {scope} show {own} violating {element}(s)"
    agree = own == count.value
    verdict = "agrees" if agree else f"DISAGREES (report {count.value}, listed {own})"
    return f"{text}; {listed}: {verdict}", agree


def _count_scope(count: ReportCount) -> str:
    if count.corners > 1 and count.corner is None:
        return f", after {count.corners} corner sections: across corners"
    if count.corner is not None and count.corner not in count.text:
        return f", in corner {count.corner}'s section"
    return ""


def _scope(what: str, corner: str | None) -> str:
    return f"{what} in corner {corner}" if corner else what


def _slack(row: Row) -> float:
    if row.slack is None:
        raise ValueError(f"a path to {row.endpoint!r} without a slack was compared")
    return row.slack
