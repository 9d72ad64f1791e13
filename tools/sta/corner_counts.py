"""The counts a report prints of itself (`setup violation count 68`, `max fanout violation count
5`, OpenLane's per-corner `max slew violations count C: 0`), each tied to the corner it counts:
the one its line names, else the one corner banner (`=== name Corner ===`) since the last count
of its kind; after several banners, none (OpenLane prints its all-corner totals after them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tools.sta.items import ReportCount

COUNT = re.compile(
    r"^((?:max|min) (?:slew|fanout|cap|capacitance)|setup|hold) violations? count"
    r"(?: ([^\s:]+):)?\s+(\d+)$"
)


@dataclass
class CornerCounts:
    since: dict[str, set[str]] = field(default_factory=dict)
    """Per count kind, the corner banners since its last count (all of them before its first)."""

    def enter(self, name: str) -> None:
        """A corner banner."""
        self.since.setdefault("", set()).add(name)  # every banner, for kinds not yet seen
        for corners in self.since.values():
            corners.add(name)

    def count(
        self, found: re.Match[str], number: int, text: str, corner: str | None
    ) -> ReportCount:
        """The count `found` (by `COUNT`) with its corner; `corner` is the one in force, taken
        when no banner came since the last count of its kind. A count that names its corner
        leaves that tally alone."""
        kind = found[1] + ("acitance" if found[1].endswith(" cap") else "")  # as its section
        if found[2]:
            return ReportCount(kind, int(found[3]), number, text, found[2], 1)
        corners = self.since.get(kind, set(self.since.get("", ())))
        self.since[kind] = set()
        tied = next(iter(corners)) if len(corners) == 1 else None if corners else corner
        return ReportCount(kind, int(found[3]), number, text, tied, len(corners))
