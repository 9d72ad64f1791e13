"""Synopsys' summary reports, line by line (Design Compiler, PrimeTime, IC Compiler II).

- The report banner (`****`, `Report : constraint`, its options, `Design`, `Version`, `Date`),
  PrimeTime's Master/Slave task lines and `Scenarios:` line, and the `1` a redirected command
  prints last: understood, nothing to give.
- `report_constraint -all_violators`: a timing section (`max_delay/setup ('clk' group)`) gives
  each row as an `EndRow` under its title (actual path delay as arrival), a design rule section
  (`max_transition`, `max_capacitance`, `max_fanout`, `min_capacitance`) each row as a `LimitRow`,
  and DC's `Total` line after it as a `ReportCount`. A name too long for its column is printed
  alone, its values on the next line; a PrimeTime row may name its scenario.
- `report_global_timing`: each `Setup violations` / `Hold violations` table, WNS, TNS and NUM by
  path category, as a `ReportedTable`.
- `report_qor`: each `Timing Path Group` block (under IC Compiler II's `Scenario` line) and the
  blocks after them (`Cell Count`, `Area`, `Design Rules`, …) as `ReportedTable`s, and its
  `Design  WNS: … TNS: … Number of Violating Paths: …` lines.

Each reader takes a line (`read`: an item, True for a line understood that gives none, None for
a line not its own, which ends what it was reading) and gives the tables it closed (`done`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from tools.sta.figures import NUMBER
from tools.sta.items import EndRow, Item, LimitRow, ReportCount, ReportedTable, Unrecognised

Read = Item | Literal[True] | None
"""What a reader makes of a line: an item, True (understood, nothing to give), None (not its own)."""

_STARS = re.compile(r"^\*{20,}$")
_REPORT = re.compile(r"^Report\s*:\s*(\S.*)$")
_BANNER_FIELD = re.compile(r"^(?:Design|Version|Date)\s*:|^-\S")
_TASKS = re.compile(
    r"^(?:(?:Start|End) of Master/Slave Task Processing"
    r"|(?:Started|Succeeded|Restoring)\s+: .*scenario '[^']*')$"
)
"""PrimeTime's lines around a command run in every scenario (a failed one is not among them)."""
_RULE = re.compile(r"^-{4,}$")


@dataclass
class Banner:
    """The report banner and the lines around it that carry no figure."""

    open: bool = False
    report: str | None = None
    """The name on the last banner's `Report :` line (`constraint`, `qor`), once one was read."""
    done: list[Item] = field(default_factory=list)

    def read(self, number: int, line: str, text: str) -> Read:
        if _STARS.match(text):
            self.open = not self.open
            return True
        if self.open:
            if found := _REPORT.match(text):
                self.report = found[1]
                return True
            if _BANNER_FIELD.match(text):
                return True
            self.open = False
            return None
        if self.report is not None and (text == "1" or text.startswith("Scenarios: ")):
            return True
        return True if _TASKS.match(text) else None

    def end(self) -> None:
        self.open = False


_GROUP_SECTION = re.compile(r"^\S+ \('[^']*' group\)$")
"""A timing section: `max_delay/setup ('clk' group)`, `min_delay/hold ('clk' group)`."""
_RULE_SECTION = re.compile(r"^(?:max|min)_(?:transition|capacitance|fanout)$")
_VALUES = (
    rf"(?:([A-Za-z_]\S*)\s+)?({NUMBER})\s+({NUMBER})(?:\s+[rf])?\s+({NUMBER})\s*\((MET|VIOLATED)\)$"
)
"""A row's part after its name: the scenario if named, required, actual (a timing row's edge
after it), slack, status."""
_ROW = re.compile(rf"^(\S+)(?:\s+\([^()]*\))?\s+{_VALUES}")
"""A whole row: the name, then DC's note on it (`rst_n (dont_touch)`) if any, then its values."""
_WRAPPED = re.compile(rf"^{_VALUES}")
_NAME = re.compile(r"^(\S*[^\d\s.]\S*)(?:\s+\([^()]*\))?$")
"""A name alone on its line (its values on the next): not a bare number, such as the `1` a
redirected command prints last."""
_TOTAL = re.compile(rf"^Total\s+(\d+)\s+({NUMBER})$")


@dataclass
class Constraint:
    """`report_constraint -all_violators` sections."""

    open: bool = False
    section: str = ""
    timing: bool = False
    element: str = "pin"
    pending: tuple[int, str] | None = None
    """A name printed alone on its line, and the line: its values are on the next."""
    done: list[Item] = field(default_factory=list)

    def read(self, number: int, line: str, text: str) -> Read:
        if _GROUP_SECTION.match(text) or _RULE_SECTION.match(text):
            self.end()
            self.open, self.section = True, text
            self.timing, self.element = text.endswith(" group)"), "pin"
            return True
        if not self.open:
            return None
        if self.pending is not None and (found := _WRAPPED.match(text)):
            first, name = self.pending
            self.pending = None
            return self._row(first, name, found.groups())
        self._abandon()
        if found := _ROW.match(text):
            return self._row(number, found[1], found.groups()[1:])
        if _RULE.match(text) or text.startswith("Required") or text.endswith("Slack"):
            self.element = "net" if text.startswith("Net") else self.element
            return True
        if not self.timing and (found := _TOTAL.match(text)):
            summary = f"{self.section}: {' '.join(text.split())}"
            return ReportCount(self.section, int(found[1]), number, summary)
        if found := _NAME.match(text):
            self.pending = (number, found[1])
            return True
        self.end()
        return None

    def _row(self, number: int, name: str, values: tuple[str | None, ...]) -> Item:
        scenario, required, actual, slack, status = values
        assert required is not None and actual is not None and slack is not None and status
        numbers = float(required), float(actual), float(slack)
        if self.timing:
            return EndRow(name, *numbers, status, number, self.section, scenario)
        return LimitRow(self.section, name, *numbers, status, number, scenario, self.element)

    def _abandon(self) -> None:
        """A line taken for a wrapped name that no values followed: said unread after all."""
        if self.pending is not None:
            self.done.append(Unrecognised(self.pending[0], self.pending[0], 1))
            self.pending = None

    def end(self) -> None:
        self._abandon()
        self.open = False


_GLOBAL_TITLE = re.compile(r"^(?:Setup|Hold) violations$")
_GLOBAL_ROW = re.compile(r"^(WNS|TNS|NUM)\s+(\S.*)$")


@dataclass
class GlobalTiming:
    """PrimeTime's `report_global_timing` tables: WNS, TNS and NUM by path category."""

    open: bool = False
    title: str = ""
    first: int = 0
    last: int = 0
    columns: list[str] | None = None
    rows: list[tuple[str, list[str], int]] = field(default_factory=list)
    done: list[Item] = field(default_factory=list)

    def read(self, number: int, line: str, text: str) -> Read:
        if _GLOBAL_TITLE.match(text):
            self.end()
            self.open, self.title, self.first, self.last = True, text, number, number
            self.columns, self.rows = None, []
            return True
        if not self.open:
            return None
        self.last = number
        if _RULE.match(text):
            if self.rows:
                self.end()
            return True
        if self.columns is None and not re.search(r"\d", text):
            self.columns = text.split()
            return True
        found = _GLOBAL_ROW.match(text)
        if found and self.columns and len(values := found[2].split()) == len(self.columns):
            self.rows.append((found[1], values, number))
            return True
        self.last -= 1
        self.end()
        return None

    def end(self) -> None:
        if self.open:
            figures = tuple(
                (column, name, values[index], line)
                for index, column in enumerate(self.columns or ())
                for name, values, line in self.rows
            )
            title = f"report_global_timing {self.title}"
            self.done.append(ReportedTable(title, figures, self.first, self.last))
        self.open = False


_SCENARIO = re.compile(r"^Scenario\s+'([^']*)'$")
_PATH_GROUP = re.compile(r"^Timing Path Group\s+'[^']*'$")
_QOR_BLOCKS = frozenset(("Cell Count", "Area", "Design Rules", "Compile CPU Statistics"))
"""The blocks `report_qor` prints after its path groups (read once a path group was)."""
_LABEL = re.compile(r"^([A-Za-z][^:]*?):\s+(\S+)$")
_DESIGN = re.compile(
    r"^(Design(?: \(Hold\))?)\s+WNS:\s*(\S+)\s+TNS:\s*(\S+)\s+Number of Violating Paths:\s*(\S+)$"
)


@dataclass
class Qor:
    """`report_qor`: its blocks of `Label: value` lines, and its design WNS/TNS lines."""

    open: bool = False
    title: str = ""
    first: int = 0
    last: int = 0
    scenario: tuple[int, str] | None = None
    """IC Compiler II's `Scenario 'name'` line above a path group, and its line."""
    groups_seen: bool = False
    figures: list[tuple[str, str, str, int]] = field(default_factory=list)
    done: list[Item] = field(default_factory=list)

    def read(self, number: int, line: str, text: str) -> Read:
        if found := _SCENARIO.match(text):
            self.end()
            self.scenario = (number, found[1])
            return True
        if _PATH_GROUP.match(text) or (self.groups_seen and text in _QOR_BLOCKS):
            self._open(number, text)
            return True
        if found := _DESIGN.match(text):
            self.end()
            names = ("WNS", "TNS", "Number of Violating Paths")
            values = found.groups()[1:]
            figures = tuple(
                ("", name, value, number) for name, value in zip(names, values, strict=True)
            )
            return ReportedTable(f"report_qor {found[1]}", figures, number, number)
        if self.open and _RULE.match(text):
            self.last = number
            return True
        if self.open and (found := _LABEL.match(text)):
            self.figures.append(("", found[1], found[2], number))
            self.last = number
            return True
        self.end()
        return None

    def _open(self, number: int, text: str) -> None:
        scenario, self.scenario = self.scenario, None
        self.end()
        self.groups_seen = self.groups_seen or text.startswith("Timing")
        where = f" (scenario {scenario[1]})" if scenario and text.startswith("Timing") else ""
        self.open, self.title = True, f"report_qor {' '.join(text.split())}{where}"
        self.first = self.last = scenario[0] if where and scenario else number
        self.figures = []

    def end(self) -> None:
        if self.scenario is not None:  # a scenario line no path group followed: not read
            self.done.append(Unrecognised(self.scenario[0], self.scenario[0], 1))
            self.scenario = None
        if self.open:
            self.done.append(ReportedTable(self.title, tuple(self.figures), self.first, self.last))
        self.open = False
