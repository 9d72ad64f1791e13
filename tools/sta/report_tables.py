"""The part of a `report_checks` text outside any path, for `tools.sta.report.Parser`: `-format
end`, `summary` and `slack_only` tables, `report_check_types` sections, `tns`/`wns`/`worst slack`
lines (their check taken from OpenLane's banner above), OpenLane's corner banners and the counts a
report prints of itself (`tools.sta.corner_counts`). A line it does not understand is the
parser's to say unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from tools.sta.corner_counts import COUNT, CornerCounts
from tools.sta.figures import NUMBER
from tools.sta.items import EndRow, Item, LimitRow, Metric, SlackOnlyRow, SummaryRow
from tools.sta.path_layouts import header_line

_END_ROW = re.compile(rf"^(\S.*?)\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})\s*\((MET|VIOLATED)\)\s*$")
_SUMMARY_ROW = re.compile(rf"^(\S+)\s+(\S.*?)\s+({NUMBER})\s*(?:\((MET|VIOLATED)\))?\s*$")
_SUMMARY_END = re.compile(rf"^(\S.*?)\s+({NUMBER})\s*(?:\((MET|VIOLATED)\))?\s*$")
"""A summary row's part from its `Endpoint` column on."""
_SLACK_ONLY_ROW = re.compile(rf"^(\S+)\s+({NUMBER})\s*$")
_CHECK_TITLE = re.compile(r"^(?:max|min)_delay/\w+ group \S+$")
"""OpenSTA's title over a `-format end` table: `max_delay/setup group clk`."""
_LIMIT_TITLE = re.compile(r"^(?:max|min) (?:slew|capacitance|fanout)$")
"""A `report_check_types` section's title."""
_LIMIT_ROW = re.compile(
    rf"^(\S.*?)\s+({NUMBER})\s+({NUMBER})\s+(?:({NUMBER})\s*)?\((MET|VIOLATED)\)\s*$"
)
_RULE = re.compile(r"^(?:-{4,}|={4,})$")
_BANNER = re.compile(r"^report_(?:worst_slack|tns|wns)\b.*$")
"""OpenLane's title over a figure: `report_worst_slack -min (Hold)` says which check it is."""
_CORNER_METRIC = re.compile(rf"^worst slack corner (\S+?):?\s+({NUMBER})\s*$")
_CORNER_BANNER = re.compile(r"^=+ (\S+) Corner =+$")
"""OpenLane's title over one corner's section: `=== nom_tt_025C_1v80 Corner ===`."""
_METRIC = re.compile(rf"^(tns|wns|worst slack)(?:\s+(max|min))?\s+({NUMBER})\s*$")
"""`tns -1.2`, and OpenROAD's `tns max -1.2` / `worst slack min 0.1` (kept in the name)."""


@dataclass
class Tables:
    """What the lines outside a path have opened: a table, its title, a banner, a corner."""

    table: str | None = None
    """The table being read: `end`, `summary`, `slack_only` or `limit` (a `report_check_types` one)."""
    check: str | None = None
    """The title of the `-format end` table being read (`max_delay/setup group clk`)."""
    banner: str | None = None
    """The last `report_worst_slack`/`report_tns`/`report_wns` title, until a figure takes it."""
    endpoint_column: int = -1
    """Where a `-format summary` table's Endpoint column starts (its header's)."""
    corner: str | None = None
    """The corner whose OpenLane banner the lines are under."""
    counts: CornerCounts = field(default_factory=CornerCounts)

    def blank(self) -> None:
        """A blank line ends a table, but a limit table's (a blank follows each cap row)."""
        if self.table is not None and self.table != "limit":
            self.table = self.check = None

    def item(self, number: int, line: str, text: str) -> Item | Literal[True] | None:
        """The item the line gives, True for a line that is understood and gives none (a title,
        a header, a rule), None for a line not understood."""
        if self.table == "limit" and not _RULE.match(text):
            if self.check and (found := _LIMIT_ROW.match(text)):
                slack = float(found[4]) if found[4] is not None else None
                return LimitRow(
                    self.check,
                    found[1],
                    float(found[2]),
                    float(found[3]),
                    slack,
                    found[5],
                    number,
                    self.corner,
                )
            self.table = None  # a limit table ends at its first line that is no row nor rule
        if found := _METRIC.match(text):
            return self._metric(found[1], found[2], found[3], number)
        if found := _CORNER_METRIC.match(text):
            check, path_type = self._check_of_banner()
            name = f"worst slack corner {found[1]}{check}"
            return Metric(name, float(found[2]), number, path_type, found[1])
        if found := COUNT.match(text):
            return self.counts.count(found, number, text, self.corner)
        if text.startswith("=") and (found := _CORNER_BANNER.match(text)):
            self.corner = found[1]
            self.counts.enter(found[1])
            return True
        if _BANNER.match(text):
            self.banner = text
            return True
        if _CHECK_TITLE.match(text) or _LIMIT_TITLE.match(text):
            self.check = text
            return True
        if text.startswith("Pin") and text.endswith("Slack"):
            self.table = "limit"
            self.check = "min pulse width" if "Width" in text else self.check
            return True
        if (
            text.startswith("Endpoint")
            and "Slack" in text
            and ("Arrival" in text or "Delay" in text)
        ):
            self.table = "end"
            return True
        if text.startswith("Startpoint") and "Endpoint" in text and "Slack" in text:
            self.table, self.endpoint_column = "summary", line.find("Endpoint")
            return True
        if text.startswith("Group") and text.split() == ["Group", "Slack"]:
            self.table = "slack_only"
            return True
        if _RULE.match(text) or (
            text.startswith("Required") and text.split() == ["Required", "Actual"]
        ):
            return True
        if self.table == "end" and (found := _END_ROW.match(text)):
            values = float(found[2]), float(found[3]), float(found[4])
            return EndRow(found[1], *values, found[5], number, self.check)
        if self.table == "summary":
            return self._summary_row(number, line, text)
        if self.table == "slack_only" and (found := _SLACK_ONLY_ROW.match(text)):
            return SlackOnlyRow(found[1], float(found[2]), number)
        return True if header_line(text) else None

    def _metric(self, name: str, min_max: str | None, value: str, number: int) -> Metric:
        """A tns/wns/worst slack line: its max or min named, or taken from the banner above, or
        OpenSTA's default (max) for a bare `tns`/`wns`."""
        if min_max:
            return Metric(f"{name} {min_max}", float(value), number, min_max)
        check, path_type = self._check_of_banner()
        if path_type is None and name != "worst slack":
            path_type = "max"
        return Metric(name + check, float(value), number, path_type)

    def _check_of_banner(self) -> tuple[str, str | None]:
        """(` max (setup)`, `max`) or (` min (hold)`, `min`) when the title over the figure says
        which, else ("", None); the title is then used up."""
        banner, self.banner = self.banner or "", None
        if "-max" in banner:
            return " max (setup)", "max"
        if "-min" in banner:
            return " min (hold)", "min"
        return "", None

    def _summary_row(self, number: int, line: str, text: str) -> SummaryRow | None:
        """Read by the header's columns: a point's name may be followed by its cell, `reg1/Q
        (DFF_X1)`, so spaces cannot tell the columns apart."""
        column = self.endpoint_column
        if 0 < column < len(line) and line[column - 1] == " " and line[:column].strip():
            found = _SUMMARY_END.match(line[column:].strip())
            if found:
                return SummaryRow(
                    line[:column].strip(), found[1], float(found[2]), found[3], number
                )
        if found := _SUMMARY_ROW.match(text):
            return SummaryRow(found[1], found[2], float(found[3]), found[4], number)
        return None
