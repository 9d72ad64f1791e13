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
from typing import Any

from tools.sta.figures import NUMBER
from tools.sta.items import (
    Extent,
    Item,
    Notice,
    StaPath,
    Unrecognised,
)
from tools.sta.json_paths import JsonDocument
from tools.sta.names import ARRIVAL_TEXT, decoded, encoded, endpoint_pin, point
from tools.sta.path_layouts import CadencePath, opening, unread_table
from tools.sta.report_tables import Tables
from tools.sta.vendor_tables import VendorTables

_FIELD = re.compile(r"^(Path Group|Path Type|Mode|Corner):\s*(.*?)\s*$")
_SLACK = re.compile(rf"^\s*({NUMBER})\s+slack\s+\((MET|VIOLATED)\)")
_TIME = re.compile(rf"^\s*(?:({NUMBER})\s+)?({NUMBER})\s+data (arrival|required) time\s*$")
_PT_SLACK = re.compile(rf"^\s*slack\s+\((MET|VIOLATED)(?::[^)]*)?\)\s+({NUMBER})\s*$")
"""PrimeTime's and DC's slack line, word first (also `VIOLATED: increase significant digits`)."""
_PT_TIME = re.compile(rf"^\s*data (arrival|required) time\s+({NUMBER})\s*$")
_PATH_TABLE = ("Description", "Incr", "Des/Clust/Port")
"""A full path's table header (or DC's wire load table): after a header, other content is short."""
_PATH_ROW = re.compile(rf"^(?:{NUMBER}(?:\s|$)|\(|-+$)")
"""A line of a path's table (a number first, a parenthesised note, a rule): no end of a header."""
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
    tables: Tables = field(default_factory=Tables)
    """The tables, titles and figures outside any path (`tools/sta/report_tables.py`)."""
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
            self.tables.blank()
            return
        row = self.vendor.read(number, line, text)
        self.items.extend(self.vendor.closed())
        if row is None:
            row = self.tables.item(number, line, text)
        if row is None:
            self._unrecognised(number)
            return
        self.said()
        if row is not True:
            self.items.append(row)

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
