"""A `-format json` check of OpenSTA as a path: its times in seconds, shown in ns."""

from __future__ import annotations

from typing import Any

from tools.sta.items import StaPath

JSON_DIGITS = 6
"""Decimals kept of a time converted from seconds to ns (below any report's precision)."""


def json_path(check: dict[str, Any], first: int, last: int) -> StaPath:
    """A `-format json` check as a path: its times are in seconds, shown here in ns (rounded to
    `JSON_DIGITS`); MET or VIOLATED is the slack's sign, as OpenSTA decides it."""
    slack = _ns(check["slack"]) if check.get("slack") is not None else None
    return StaPath(
        startpoint=str(check["startpoint"]),
        endpoint=str(check["endpoint"]),
        group=check.get("path_group"),
        path_type=check.get("path_type"),
        arrival=_ns(check["data_arrival_time"]) if "data_arrival_time" in check else None,
        required=_ns(check["required_time"]) if "required_time" in check else None,
        slack=slack,
        status=None if slack is None else "MET" if slack >= 0 else "VIOLATED",
        unconstrained=slack is None,
        first_line=first,
        last_line=last,
        from_json=True,
    )


def _ns(seconds: object) -> float:
    if type(seconds) not in (int, float):
        raise TypeError("a time that is not a number")
    return round(float(seconds) * 1e9, JSON_DIGITS)  # type: ignore[arg-type]
