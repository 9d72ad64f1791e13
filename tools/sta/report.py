"""A streaming parser for OpenSTA-style `report_checks` text.

It reads full paths (Startpoint/Endpoint with their reasons, Path Group, Path Type, Mode, Corner,
the table, arrival and required times, slack MET or VIOLATED; PrimeTime's and Design Compiler's
`Point Incr Path` layout; Cadence's `Path N:` layouts through `tools.sta.path_layouts`), `-format
end`, `summary` and `slack_only` tables, `tns`/`wns`/`worst slack` lines (OpenROAD's `max`/`min`
after the name), `report_check_types` sections (under OpenLane's `=== name Corner ===` banner,
their corner), the counts a report prints of itself (`setup violation count 68`) and notices; a
line outside a path is offered first to the commercial tools' summary readers
(`tools.sta.vendor_tables`). It holds one path at a time. A path cut off by the end of the report
(or by the next path's Startpoint) is yielded with `truncated=True`, never dropped, unless all it
holds is a whole header (`-format short`); an unconstrained path has no slack. The report's length
comes last, so that what was read and what was not add up to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from tools.sta.corner_counts import COUNT, CornerCounts
from tools.sta.figures import NUMBER
from tools.sta.items import (
    EndRow,
    Extent,
    Item,
    LimitRow,
    Metric,
    Notice,
    SlackOnlyRow,
    StaPath,
    SummaryRow,
    Unrecognised,
)
from tools.sta.json_paths import JsonDocument
from tools.sta.names import ARRIVAL_TEXT, decoded, encoded, endpoint_pin, point
from tools.sta.path_layouts import CadencePath, header_line, opening, unread_table
from tools.sta.vendor_tables import VendorTables

_FIELD = re.compile(r"^(Path Group|Path Type|Mode|Corner):\s*(.*?)\s*$")
_SLACK = re.compile(rf"^\s*({NUMBER})\s+slack\s+\((MET|VIOLATED)\)")
_TIME = re.compile(rf"^\s*(?:({NUMBER})\s+)?({NUMBER})\s+data (arrival|required) time\s*$")
_PT_SLACK = re.compile(rf"^\s*slack\s+\((MET|VIOLATED)(?::[^)]*)?\)\s+({NUMBER})\s*$")
"""PrimeTime's and DC's slack line, word first (also `VIOLATED: increase significant digits`)."""
_PT_TIME = re.compile(rf"^\s*data (arrival|required) time\s+({NUMBER})\s*$")
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
_PATH_TABLE = ("Description", "Incr", "Des/Clust/Port")
"""A full path's table header (or DC's wire load table): after a header, other content is short."""
_PATH_ROW = re.compile(rf"^(?:{NUMBER}(?:\s|$)|\(|-+$)")
"""A line of a path's table (a number first, a parenthesised note, a rule): no end of a header."""
_METRIC = re.compile(rf"^(tns|wns|worst slack)(?:\s+(max|min))?\s+({NUMBER})\s*$")
"""`tns -1.2`, and OpenROAD's `tns max -1.2` / `worst slack min 0.1` (kept in the name)."""
_WARNING = re.compile(r"^(Warning|Error)\b")
_FIELD_NAMES_TO_KEYS = {
    "Path Group": "group",
    "Path Type": "path_type",
    "Mode": "mode",
    "Corner": "corner",
}
_FIELD_NAMES = tuple(_FIELD_NAMES_TO_KEYS)


@dataclass
class Parser:
    """The line-by-line reader: the reference for what every path in a report says."""

    path: dict[str, Any] | None = None
    """The fields of the path being read (a plain dict: updated per line, frozen when it closes)."""
    pending: str | None = None
    """`start` or `end` while a wrapped point's reason is expected on the next line."""
    in_table: bool = False
    """The open path's table has begun (its `… Description` or `Point Incr Path` header)."""
    blank: bool = False
    """A blank line followed the open path's header fields, before any table."""
    table: str | None = None
    """`end`, `summary` or `slack_only` inside such a table."""
    check: str | None = None
    """The title of the `-format end` table being read (`max_delay/setup group clk`)."""
    banner: str | None = None
    """The last `report_worst_slack`/`report_tns`/`report_wns` title, until a figure takes it."""
    endpoint_column: int = -1
    """Where a `-format summary` table's Endpoint column starts (its header's)."""
    previous_row: str = ""
    """The open path's line before this one: the endpoint's pin row, above `data arrival time`."""
    pin_read: bool = False
    """The open path's first line naming `data arrival time` was seen, and the pin with it."""
    unread: list[int] | None = None
    """First line, last line and count of unrecognised lines not yet said."""
    json: JsonDocument | None = None
    """A `-format json` document being read."""
    header_only: bool = True
    """The open path has shown only header lines (Endpoint, fields, reasons) and blank lines."""
    corner: str | None = None
    """The corner whose OpenLane banner the lines are under."""
    counts: CornerCounts = field(default_factory=CornerCounts)
    last_number: int = 0
    vendor: VendorTables = field(default_factory=VendorTables)
    """The commercial tools' summary reports, asked first about every line outside a path."""
    layout: CadencePath | None = None
    """A path in a Cadence layout being read (`tools.sta.path_layouts`)."""
    short_at: int = 0
    """The line that ended the last `-format short` path (if unread, so may be that path's table)."""
    items: list[Item] = field(default_factory=list)

    def feed(self, number: int, raw: str) -> None:
        self.last_number = number
        line = raw.rstrip("\r\n")
        text = line.strip()
        if self.layout is not None:
            if self.layout.feed(number, line):
                return
            self.interrupted()  # the line is not the path's: it ends there
        if self.path is not None and self._is_short(text):
            self.close(truncated=False, short=True)
            self.short_at = number
        json_starts = self.path is None and text.startswith('{"checks"')
        if (self.json is not None or json_starts) and self._feed_json(number, line, text):
            return
        if text.startswith(("Warning", "Error", "No paths")) and (
            _WARNING.match(text) or text == "No paths found."
        ):
            self.said()
            self.items.append(Notice(text, number))
            return
        if text.startswith("Path ") and (found := opening(text)):
            self.interrupted()
            self.said()
            self.layout = CadencePath.opened(found, number)
            return
        if text.startswith("Startpoint:"):
            self.interrupted()
            self.said()
            name, reason = point(text.removeprefix("Startpoint:"))
            self.previous_row, self.pin_read = "", ARRIVAL_TEXT in line
            self.path = {
                "startpoint": name,
                "start_reason": reason,
                "first_line": number,
                "last_line": number,
            }
            self.pending = None if reason else "start"
            self.in_table = self.blank = False
            self.header_only = True
            return
        if self.path is not None:
            self._feed_path(number, line, text)
            return
        self._feed_table(number, line, text)

    def _feed_json(self, number: int, line: str, text: str) -> bool:
        """A `-format json` document, each check read as a path once its lines parse. A line no
        JSON document holds (`Startpoint:`, a `---` banner) ends it unread: its lines are said as
        unrecognised, and the line is read as any other (returns False)."""
        if self.json is None:
            self.said()
            self.json = JsonDocument(number)
        elif not self.json.holds(text):
            self._json_unread(number - 1)
            return False
        paths = self.json.add(number, line, text)
        if paths is not None:
            self.json = None
            self.items.extend(paths)
        elif self.json.full:
            self._json_unread(number)
        return True

    def _json_unread(self, last: int) -> None:
        assert self.json is not None
        self.unread, self.json = self.json.unread(last), None

    def _is_short(self, text: str) -> bool:
        """A `-format short` path ends at its header: other content after a blank line."""
        if self.in_table or not text:
            self.blank = self.blank or (not text and not self.in_table)
            return False
        if any(word in text for word in _PATH_TABLE):
            self.in_table = True
            return False
        return (
            self.blank
            and self.header_only
            and not text.startswith((*_FIELD_NAMES, "Endpoint:"))
            and not _PATH_ROW.match(text)
        )

    def _feed_path(self, number: int, line: str, text: str) -> None:
        path = self.path
        assert path is not None
        path["last_line"] = number
        previous, self.previous_row = self.previous_row, line
        if not self.pin_read and ARRIVAL_TEXT in line:
            self.pin_read = True
            self._read_pin(previous)
        if self.pending and text.startswith("(") and text.endswith(")"):
            path["start_reason" if self.pending == "start" else "end_reason"] = text[1:-1]
            self.pending = None
            return
        self.pending = None
        if text and not text.startswith(("Endpoint:", *_FIELD_NAMES)):
            self.header_only = False
        if text.endswith(" time") and (found := _TIME.match(line)):
            path.setdefault(found[3], float(found[2]))  # the first, not the recap's
        elif "slack (" in text and (found := _SLACK.match(line)):
            path["slack"], path["status"] = float(found[1]), found[2]
            self.close(truncated=False)
        elif text.startswith("data ") and (found := _PT_TIME.match(line)):
            path.setdefault(found[1], float(found[2]))  # the first, not the recap's negated one
        elif text.startswith("slack (") and (found := _PT_SLACK.match(line)):
            path["slack"], path["status"] = float(found[2]), found[1]
            self.close(truncated=False)
        elif text.startswith("Endpoint:"):
            name, reason = point(text.removeprefix("Endpoint:"))
            path["endpoint"], path["end_reason"] = name, reason
            self.pending = None if reason else "end"
        elif text.startswith(_FIELD_NAMES) and (found := _FIELD.match(text)):
            path[_FIELD_NAMES_TO_KEYS[found[1]]] = found[2]
        elif text.startswith("(") and _says_unconstrained(text):
            path["unconstrained"] = True
            self.close(truncated=False)

    def _read_pin(self, row: str) -> None:
        """The endpoint's pin, if `row` (above the path's first line naming `data arrival time`)
        names one."""
        path = self.path
        if path is not None and "endpoint" in path:
            endpoint = encoded(path["endpoint"])
            if (pin := endpoint_pin(encoded(row), endpoint)) is not endpoint:
                path["endpoint"], path["instance"] = decoded(pin), path["endpoint"]

    def _feed_table(self, number: int, line: str, text: str) -> None:
        """A line outside any path: a table's, a tns/wns line, or unrecognised (said later)."""
        if not text:
            self.items.extend(self.vendor.blank())
            if self.table is not None and self.table != "limit":  # a blank follows each cap row
                self.table = self.check = None
            return
        row = self.vendor.read(number, line, text)
        self.items.extend(self.vendor.closed())
        if row is None:
            row = self._table_item(number, line, text)
        if row is None:
            self._unrecognised(number)
            return
        self.said()
        if row is not True:
            self.items.append(row)

    def _table_item(self, number: int, line: str, text: str) -> Item | Literal[True] | None:
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

    def _unrecognised(self, number: int) -> None:
        if number == self.short_at:
            unread_table(self.items)
        if self.unread is None:
            self.unread = [number, number, 1]
        else:
            self.unread[1], self.unread[2] = number, self.unread[2] + 1

    def said(self) -> None:
        """Unrecognised lines so far, as one item (a recognised line ends their stretch)."""
        if self.unread is not None:
            self.items.append(Unrecognised(*self.unread))
            self.unread = None

    def close(self, truncated: bool, short: bool = False) -> None:
        if self.path is not None:
            fields = self.path
            arrival, required = fields.pop("arrival", None), fields.pop("required", None)
            self.items.append(
                StaPath(
                    **fields,
                    arrival=arrival,
                    required=required,
                    truncated=truncated and not short,
                    short=short,
                )
            )
        self.path, self.pending = None, None

    def interrupted(self) -> None:
        """A `Startpoint:` line (or the report's end): the open path ends there, short if all it
        holds is a header, else truncated."""
        if self.layout is not None:
            self.items.append(self.layout.path())
            self.layout = None
        self.close(truncated=True, short=self._header_only())

    def _header_only(self) -> bool:
        """What `-format short` prints: a header and a blank line, no table; or a whole header
        (Endpoint and Path Type read) and nothing else, as when the blank lines were cut off."""
        path = self.path
        if path is None or self.in_table or not self.header_only:
            return False
        return self.blank or ("endpoint" in path and "path_type" in path)

    def finish(self, lines: int | None = None) -> None:
        """The end of the report (`lines` long, if not the last line fed): an open path is short
        or truncated; unrecognised lines (and a JSON document left open) are said; the extent
        comes last."""
        self.interrupted()
        self.items.extend(self.vendor.finish())
        if self.json is not None:
            self.said()
            self._json_unread(self.json.first + len(self.json.lines) - 1)
        self.said()
        self.items.append(Extent(self.last_number if lines is None else lines))

    def drain(self) -> list[Item]:
        items, self.items = self.items, []
        return items


def parse(lines: Iterable[tuple[int, str]]) -> Iterator[Item]:
    """Items in report order from `(line number, text)` pairs, holding at most one path."""
    parser = Parser()
    for number, text in lines:
        parser.feed(number, text)
        yield from parser.drain()
    parser.finish()
    yield from parser.drain()


def parse_text(text: str) -> list[Item]:
    return list(parse(enumerate(text.splitlines(), 1)))


def _says_unconstrained(text: str) -> bool:
    """`(Path is unconstrained)` in lower, capitalised or upper case: the spellings the fast scan
    in `tools/sta/scan.py` also checks for, so that both readers agree."""
    return "nconstrained" in text or "NCONSTRAINED" in text
