"""A streaming parser for OpenSTA-style `report_checks` text.

It reads full-path reports (Startpoint/Endpoint with their reasons, Path Group, Path Type, optional
Mode and Corner, the Delay/Time/Description table, data arrival and required times, slack MET or
VIOLATED), `-format end` and `-format summary` tables, `tns`/`wns`/`worst slack` lines (with
OpenROAD's `max`/`min` after the name) and notices (warnings, errors, `No paths found.`). It holds
one path at a time. A path cut off by the end of the report (or by the next path's Startpoint) is
yielded with `truncated=True`, never dropped; a path reported as unconstrained has no slack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_FIELD = re.compile(r"^(Path Group|Path Type|Mode|Corner):\s*(.*?)\s*$")
_SLACK = re.compile(rf"^\s*({NUMBER})\s+slack\s+\((MET|VIOLATED)\)")
_TIME = re.compile(rf"^\s*(?:({NUMBER})\s+)?({NUMBER})\s+data (arrival|required) time\s*$")
_END_ROW = re.compile(rf"^(\S.*?)\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})\s*\((MET|VIOLATED)\)\s*$")
_SUMMARY_ROW = re.compile(rf"^(\S+)\s+(\S.*?)\s+({NUMBER})\s*\((MET|VIOLATED)\)\s*$")
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


@dataclass(frozen=True)
class StaPath:
    startpoint: str
    endpoint: str = ""
    start_reason: str | None = None
    end_reason: str | None = None
    group: str | None = None
    path_type: str | None = None
    mode: str | None = None
    corner: str | None = None
    arrival: float | None = None
    required: float | None = None
    slack: float | None = None
    status: str | None = None
    """`MET`, `VIOLATED`, or None for an unconstrained or truncated path."""
    unconstrained: bool = False
    truncated: bool = False
    first_line: int = 0
    last_line: int = 0


@dataclass(frozen=True)
class EndRow:
    endpoint: str
    required: float
    arrival: float
    slack: float
    status: str
    line: int


@dataclass(frozen=True)
class SummaryRow:
    startpoint: str
    endpoint: str
    slack: float
    status: str
    line: int


@dataclass(frozen=True)
class Metric:
    name: str
    value: float
    line: int


@dataclass(frozen=True)
class Notice:
    """A warning or error line, or `No paths found.`."""

    text: str
    line: int


Item = StaPath | EndRow | SummaryRow | Metric | Notice


@dataclass
class Parser:
    """The line-by-line reader: the reference for what every path in a report says."""

    path: dict[str, Any] | None = None
    """The fields of the path being read (a plain dict: updated per line, frozen when it closes)."""
    pending: str | None = None
    """`start` or `end` while a wrapped point's reason is expected on the next line."""
    table: str | None = None
    """`end` or `summary` inside such a table."""
    items: list[Item] = field(default_factory=list)

    def feed(self, number: int, raw: str) -> None:
        line = raw.rstrip("\r\n")
        text = line.strip()
        if text.startswith(("Warning", "Error", "No paths")) and (
            _WARNING.match(text) or text == "No paths found."
        ):
            self.items.append(Notice(text, number))
            return
        if text.startswith("Startpoint:"):
            self.close(truncated=True)
            name, reason = _point(text.removeprefix("Startpoint:"))
            self.path = {
                "startpoint": name,
                "start_reason": reason,
                "first_line": number,
                "last_line": number,
            }
            self.pending = None if reason else "start"
            return
        if self.path is not None:
            self._feed_path(number, line, text)
            return
        self._feed_table(number, text)

    def _feed_path(self, number: int, line: str, text: str) -> None:
        path = self.path
        path["last_line"] = number
        if self.pending and text.startswith("(") and text.endswith(")"):
            path["start_reason" if self.pending == "start" else "end_reason"] = text[1:-1]
            self.pending = None
            return
        self.pending = None
        if text.endswith(" time") and (found := _TIME.match(line)):
            path.setdefault(
                found[3], float(found[2])
            )  # the first arrival/required line, not the recap
        elif "slack (" in text and (found := _SLACK.match(line)):
            path["slack"], path["status"] = float(found[1]), found[2]
            self.close(truncated=False)
        elif text.startswith("Endpoint:"):
            name, reason = _point(text.removeprefix("Endpoint:"))
            path["endpoint"], path["end_reason"] = name, reason
            self.pending = None if reason else "end"
        elif text.startswith(_FIELD_NAMES) and (found := _FIELD.match(text)):
            path[_FIELD_NAMES_TO_KEYS[found[1]]] = found[2]
        elif text.startswith("(") and _says_unconstrained(text):
            path["unconstrained"] = True
            self.close(truncated=False)

    def _feed_table(self, number: int, text: str) -> None:
        if found := _METRIC.match(text):
            name = f"{found[1]} {found[2]}" if found[2] else found[1]
            self.items.append(Metric(name, float(found[3]), number))
        elif text.startswith("Endpoint") and "Slack" in text and "Arrival" in text:
            self.table = "end"
        elif text.startswith("Startpoint") and "Endpoint" in text and "Slack" in text:
            self.table = "summary"
        elif not text:
            self.table = None
        elif self.table == "end" and (found := _END_ROW.match(text)):
            self.items.append(
                EndRow(
                    found[1], float(found[2]), float(found[3]), float(found[4]), found[5], number
                )
            )
        elif self.table == "summary" and (found := _SUMMARY_ROW.match(text)):
            self.items.append(SummaryRow(found[1], found[2], float(found[3]), found[4], number))

    def close(self, truncated: bool) -> None:
        if self.path is not None:
            fields = self.path
            arrival, required = fields.pop("arrival", None), fields.pop("required", None)
            self.items.append(
                StaPath(**fields, arrival=arrival, required=required, truncated=truncated)
            )
        self.path, self.pending = None, None

    def drain(self) -> list[Item]:
        items, self.items = self.items, []
        return items


def parse(lines: Iterable[tuple[int, str]]) -> Iterator[Item]:
    """Items in report order from `(line number, text)` pairs, holding at most one path."""
    parser = Parser()
    for number, text in lines:
        parser.feed(number, text)
        yield from parser.drain()
    parser.close(truncated=True)
    yield from parser.drain()


def parse_text(text: str) -> list[Item]:
    return list(parse(enumerate(text.splitlines(), 1)))


def _says_unconstrained(text: str) -> bool:
    """`(Path is unconstrained)` in lower, capitalised or upper case: the spellings the fast scan
    in `tools/stascan.py` also checks for, so that both readers agree."""
    return "nconstrained" in text or "NCONSTRAINED" in text


def _point(rest: str) -> tuple[str, str | None]:
    """`name (reason)` → (name, reason); a name whose reason wrapped to the next line → (name, None)."""
    rest = rest.strip()
    if rest.endswith(")") and " (" in rest:
        name, _, reason = rest.rpartition(" (")
        return name.strip(), reason[:-1]
    return rest, None
