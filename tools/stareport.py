"""A streaming parser for OpenSTA-style `report_checks` text.

It reads full-path reports (Startpoint/Endpoint with their reasons, Path Group, Path Type, optional
Mode and Corner, the Delay/Time/Description table, data arrival and required times, slack MET or
VIOLATED), `-format end` and `-format summary` tables, and `tns`/`wns`/`worst slack` lines. It holds
one path at a time. A path cut off by the end of the report (or by the next path's Startpoint) is
yielded with `truncated=True`, never dropped; a path reported as unconstrained has no slack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_FIELD = re.compile(r"^(Path Group|Path Type|Mode|Corner):\s*(.*?)\s*$")
_SLACK = re.compile(rf"^\s*({NUMBER})\s+slack\s+\((MET|VIOLATED)\)")
_TIME = re.compile(rf"^\s*(?:({NUMBER})\s+)?({NUMBER})\s+data (arrival|required) time\s*$")
_END_ROW = re.compile(rf"^(\S.*?)\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})\s*\((MET|VIOLATED)\)\s*$")
_SUMMARY_ROW = re.compile(rf"^(\S+)\s+(\S.*?)\s+({NUMBER})\s*\((MET|VIOLATED)\)\s*$")
_METRIC = re.compile(rf"^(tns|wns|worst slack)\s+({NUMBER})\s*$")
_WARNING = re.compile(r"^(Warning|Error)\b")


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
class _Parser:
    path: StaPath | None = None
    pending: str | None = None
    """`start` or `end` while a wrapped point's reason is expected on the next line."""
    table: str | None = None
    """`end` or `summary` inside such a table."""
    items: list[Item] = field(default_factory=list)

    def feed(self, number: int, raw: str) -> None:
        line = raw.rstrip("\r\n")
        text = line.strip()
        if _WARNING.match(text) or text == "No paths found.":
            self.items.append(Notice(text, number))
            return
        if text.startswith("Startpoint:"):
            self._close(truncated=True)
            name, reason = _point(text.removeprefix("Startpoint:"))
            self.path = StaPath(
                startpoint=name, start_reason=reason, first_line=number, last_line=number
            )
            self.pending = None if reason else "start"
            return
        if self.path is not None:
            self._feed_path(number, line, text)
            return
        self._feed_table(number, text)

    def _feed_path(self, number: int, line: str, text: str) -> None:
        path = replace(self.path, last_line=number)
        if self.pending and text.startswith("(") and text.endswith(")"):
            key = "start_reason" if self.pending == "start" else "end_reason"
            self.path, self.pending = replace(path, **{key: text[1:-1]}), None
            return
        self.pending = None
        if text.startswith("Endpoint:"):
            name, reason = _point(text.removeprefix("Endpoint:"))
            self.path, self.pending = (
                replace(path, endpoint=name, end_reason=reason),
                None if reason else "end",
            )
        elif found := _FIELD.match(text):
            key = {
                "Path Group": "group",
                "Path Type": "path_type",
                "Mode": "mode",
                "Corner": "corner",
            }[found[1]]
            self.path = replace(path, **{key: found[2]})
        elif found := _TIME.match(line):
            key = "arrival" if found[3] == "arrival" else "required"
            first = getattr(path, key) is None
            self.path = replace(path, **{key: float(found[2])}) if first else path
        elif found := _SLACK.match(line):
            self.path = replace(path, slack=float(found[1]), status=found[2])
            self._close(truncated=False)
        elif "unconstrained" in text.lower() and text.startswith("("):
            self.path = replace(path, unconstrained=True)
            self._close(truncated=False)
        else:
            self.path = path

    def _feed_table(self, number: int, text: str) -> None:
        if found := _METRIC.match(text):
            self.items.append(Metric(found[1], float(found[2]), number))
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

    def _close(self, truncated: bool) -> None:
        if self.path is not None:
            self.items.append(replace(self.path, truncated=truncated))
        self.path, self.pending = None, None

    def drain(self) -> list[Item]:
        items, self.items = self.items, []
        return items


def parse(lines: Iterable[tuple[int, str]]) -> Iterator[Item]:
    """Items in report order from `(line number, text)` pairs, holding at most one path."""
    parser = _Parser()
    for number, text in lines:
        parser.feed(number, text)
        yield from parser.drain()
    parser._close(truncated=True)
    yield from parser.drain()


def parse_text(text: str) -> list[Item]:
    return list(parse(enumerate(text.splitlines(), 1)))


def _point(rest: str) -> tuple[str, str | None]:
    """`name (reason)` → (name, reason); a name whose reason wrapped to the next line → (name, None)."""
    rest = rest.strip()
    if rest.endswith(")") and " (" in rest:
        name, _, reason = rest.rpartition(" (")
        return name.strip(), reason[:-1]
    return rest, None
