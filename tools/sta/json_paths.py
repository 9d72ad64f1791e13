"""OpenSTA's `-format json` document, read as paths: its times in seconds, shown in ns."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tools.sta.items import StaPath

JSON_DIGITS = 6
"""Decimals kept of a time converted from seconds to ns (below any report's precision)."""
MAX_JSON_LINES = 1_000_000
"""A `-format json` document longer than this is said as unrecognised lines, not held."""
_JSON_LINE_STARTS = frozenset('{}[]",-0123456789tfn')
"""How a line of a pretty-printed JSON document can begin (after its indentation)."""


@dataclass
class JsonDocument:
    """A document being read: its lines held (at most `MAX_JSON_LINES`) until they parse."""

    first: int
    lines: list[str] = field(default_factory=list)

    def holds(self, text: str) -> bool:
        """Whether a line (stripped) can be one of a JSON document's."""
        return not text or text[0] in _JSON_LINE_STARTS

    def add(self, number: int, line: str, text: str) -> list[StaPath] | None:
        """The document's paths once its lines parse, else None (more to come, or `full`)."""
        self.lines.append(line)
        if not text.endswith(("}", "]")) and not self.full:
            return None
        try:
            checks = json.loads("\n".join(self.lines))["checks"]
            return [json_path(check, self.first, number) for check in checks]
        except (ValueError, KeyError, TypeError, IndexError):
            return None

    @property
    def full(self) -> bool:
        return len(self.lines) >= MAX_JSON_LINES

    def unread(self, last: int) -> list[int]:
        """First line, last line and non-blank lines, as `Unrecognised` counts them."""
        return [self.first, last, sum(bool(line.strip()) for line in self.lines)]


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
