"""The commercial tools' summary reports, beside OpenSTA's: which reader a line outside any path
belongs to (`tools.sta.synopsys_tables`, `tools.sta.innovus_tables`), and the lines in which a
report says it holds nothing to list, read as a true zero with their line.

`tools.sta.report.Parser` asks `VendorTables.read` first about every such line: the reader in
course keeps it if it is of its table, else its table ends there; else a reader that opens on it
takes it; else the line goes on to OpenSTA's readers, and from them to the lines said unread. A
table is given when it ends (`closed`), at a blank line (`blank`) or at the report's end
(`finish`), so that a table is never held past its last line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from tools.sta.innovus_tables import TimeDesign
from tools.sta.items import Item, Notice
from tools.sta.synopsys_tables import Banner, Constraint, GlobalTiming, Qor, Read

NOTHING = re.compile(
    r"^(?:No paths with slack less than \S+|No constrained paths|This design has no violated "
    r"constraints|No (?:setup|hold) violations found)\.$"
)
"""A report's statement that it holds nothing to list (PrimeTime's and DC's words)."""


class Reader(Protocol):
    """One report kind's reader: `open` while a table of it is in course."""

    done: list[Item]

    @property
    def open(self) -> bool: ...

    def read(self, number: int, line: str, text: str) -> Read: ...

    def end(self) -> None: ...


_OPENERS = (
    *("*", "Report", "Scenarios: ", "Start of ", "End of ", "Started ", "Succeeded ", "Restoring "),
    *("1", "No ", "This design ", "max_", "min_", "Setup ", "Hold ", "Scenario ", "Timing Path "),
    *("Design", "Cell Count", "Area", "Compile CPU", "+", "Density:"),
)
"""How every line that can open one of these readers' tables begins (or it ends as `_CLOSERS`):
any other line outside a table is passed on at the cost of two string tests."""
_CLOSERS = ("Summary", " group)")


@dataclass
class VendorTables:
    done: list[Item] = field(default_factory=list)
    """What the readers gave as their tables ended (one list, shared by them)."""
    readers: tuple[Reader, ...] = ()
    active: Reader | None = None

    def __post_init__(self) -> None:
        done = self.done
        self.readers = (
            Banner(done=done),
            Constraint(done=done),
            GlobalTiming(done=done),
            Qor(done=done),
            TimeDesign(done=done),
        )

    def read(self, number: int, line: str, text: str) -> Read:
        """The line's item, True for a line understood that gives none, None if no reader here
        knows it."""
        if self.active is not None:
            found = self.active.read(number, line, text)
            if found is not None:
                self.active = self.active if self.active.open else None
                return found
            self.active = None
        if not text.startswith(_OPENERS) and not text.endswith(_CLOSERS):
            return None
        if NOTHING.match(text):
            return Notice(text, number)
        for reader in self.readers:
            found = reader.read(number, line, text)
            if found is not None:
                self.active = reader if reader.open else None
                return found
        return None

    def closed(self) -> list[Item]:
        """The tables (and lines said unread after all) given since the last call."""
        if not self.done:
            return []
        items = self.done.copy()
        self.done.clear()
        return items

    def blank(self) -> list[Item]:
        """A blank line: the table in course ends (report_constraint's sections go on)."""
        if self.active is not None and not isinstance(self.active, (Banner, Constraint)):
            self.active.end()
            self.active = None
        return self.closed()

    def finish(self) -> list[Item]:
        for reader in self.readers:
            reader.end()
        self.active = None
        return self.closed()
