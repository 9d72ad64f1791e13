"""Innovus' timing summary tables, line by line (`timeDesign`, `optDesign`; Tempus prints the same).

Under a title (`timeDesign Summary`, `optDesign Final Summary`) and the views it names (`Setup
views included:`), a table between `+---+` borders: a header of one or more `|` lines, then rows.
The mode table (`Setup mode | all | reg2reg | …`) gives WNS, TNS, violating and all paths by path
category, and with `-expandedViews` each view's rows below it, unlabelled but for the view's name,
in the order of the labelled rows; the DRV table gives nets (terms) and worst violation by rule,
its column names read from the header's two levels (`Real` over `Nr nets(terms)` and `Worst
Vio`). Each table is a `ReportedTable`, every figure as printed; `Density:` is one more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from tools.sta.items import Item, ReportedTable, Unrecognised
from tools.sta.synopsys_tables import Read

_TITLE = re.compile(r"^(?:\w+ ){0,4}Summary$")
_VIEWS = re.compile(r"^(?:Setup|Hold) views included:$")
_BORDER = re.compile(r"^\+[-+]+\+$")
_DENSITY = re.compile(r"^Density:\s+(\S+)$")

Cell = tuple[int, int, str]
"""A header cell: where it starts and ends on its line, and its text."""


def _cells(line: str) -> list[Cell]:
    """The cells between the bars of a `|` line, with their spans."""
    bars = [at for at, char in enumerate(line) if char == "|"]
    return [(start, end, line[start + 1 : end].strip()) for start, end in pairwise(bars)]


def _columns(header: list[str]) -> tuple[str, list[str]]:
    """The table's name (its header's first cell) and its columns' names: each cell of the last
    header line, after the text of the cells above it (DRVs: `Real` over `Worst Vio`)."""
    rows = [_cells(line) for line in header]
    name = next((cells[0][2].split("+")[0].strip() for cells in rows if cells[0][2]), "")
    columns = []
    for start, _, text in rows[-1][1:]:
        above = [
            cell
            for cells in rows[:-1]
            for first, end, cell in cells[1:]
            if first <= start < end and cell and "+" not in cell
        ]
        columns.append(" ".join([*above, text]))
    return name, columns


@dataclass
class _Table:
    first: int
    last: int
    header: list[str] = field(default_factory=list)
    name: str = ""
    columns: list[str] = field(default_factory=list)
    sections: int = 0
    """Borders after the header: rows under the first are labelled, under later ones by view."""
    rows: list[tuple[str, list[str], int]] = field(default_factory=list)
    views: list[tuple[str, list[tuple[list[str], int]]]] = field(default_factory=list)

    def row(self, cells: list[str], number: int) -> bool:
        label, values = cells[0].rstrip(":").strip(), cells[1:]
        if len(values) != len(self.columns):
            return False
        if self.sections == 1:
            self.rows.append((label, values, number))
        elif label:
            self.views.append((label, [(values, number)]))
        elif self.views and len(self.views[-1][1]) < len(self.rows):
            self.views[-1][1].append((values, number))
        else:
            return False
        return True

    def figures(self) -> tuple[tuple[str, str, str, int], ...]:
        if not self.name.endswith(" mode"):  # DRVs: by rule, each column a figure
            return tuple(
                (label, column, value, line)
                for label, values, line in self.rows
                for column, value in zip(self.columns, values, strict=True)
            )
        labels = [label for label, _, _ in self.rows]
        found = [
            (column, label, values[index], line)
            for index, column in enumerate(self.columns)
            for label, values, line in self.rows
        ]
        for view, rows in self.views:
            found += [
                (f"view {view} {column}", label, values[index], line)
                for index, column in enumerate(self.columns)
                for label, (values, line) in zip(labels, rows, strict=False)
            ]
        return tuple(found)


@dataclass
class TimeDesign:
    """The summary's title, views, tables and density."""

    summary: str | None = None
    views: list[str] | None = None
    """The view names read under `Setup views included:` (None outside that list)."""
    named: str = ""
    """The views of the next mode table, as said in its title."""
    table: _Table | None = None
    done: list[Item] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.table is not None or self.views is not None

    def read(self, number: int, line: str, text: str) -> Read:
        if self.table is None and _TITLE.match(text):
            self.summary = text
            return True
        if _VIEWS.match(text):
            self.views = []
            return True
        if self.views is not None and " " not in text and text[0] not in "+|":
            self.views.append(text)
            return True
        self._close_views()
        if _BORDER.match(text):
            return self._border(number)
        if self.table is not None and text.startswith("|") and self._bar(number, line):
            return True
        self.end()
        if self.summary is not None and (found := _DENSITY.match(text)):
            figures = (("", "Density", found[1], number),)
            return ReportedTable(f"{self.summary} · Density", figures, number, number)
        return None

    def _border(self, number: int) -> Read:
        table = self.table
        if table is None:
            if self.summary is None:  # a table under no summary title: not one of these
                return None
            self.table = _Table(number, number)
        elif table.sections or table.header:
            if not table.sections:
                table.name, table.columns = _columns(table.header)
            table.sections += 1
            table.last = number
        return True

    def _bar(self, number: int, line: str) -> bool:
        table = self.table
        assert table is not None
        if not table.sections:
            first = _cells(line.strip())[0][2] if "|" in line.strip()[1:] else ""
            if not table.header and first and not first.endswith(" mode"):
                return self._refuse(table)  # another table (a path's, say): not read here
            table.header.append(line.strip())
        elif not table.row([cell for _, _, cell in _cells(line.strip())], number):
            return False
        table.last = number
        return True

    def _refuse(self, table: _Table) -> bool:
        """The border lines taken for this table's start are said unread after all."""
        self.done.append(Unrecognised(table.first, table.last, table.last - table.first + 1))
        self.table = None
        return False

    def _close_views(self) -> None:
        if self.views:
            self.named = f" (views {', '.join(self.views)})"
        self.views = None

    def end(self) -> None:
        self._close_views()
        table = self.table
        if table is None:
            return
        if not table.sections:  # borders and a header, never a row: not a table of figures
            self._refuse(table)
            return
        self.table = None
        title = f"{self.summary} · {table.name}" if self.summary else table.name
        if table.name.endswith(" mode"):
            title, self.named = title + self.named, ""
        self.done.append(ReportedTable(title, table.figures(), table.first, table.last))
