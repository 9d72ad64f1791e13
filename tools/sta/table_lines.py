"""What the STA tools say of a report's tables, apart from its paths: `stasummary`'s line per
`-format end` or `report_constraint` table, `summary` table, `slack_only` row, `-format json`
group, limit-check section and table of a commercial tool's own figures; and what `stapaths`
takes besides paths (`TableSelection`): table rows ranked like paths, the report's statements that
it holds nothing, and where its tables of figures are."""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count
from operator import attrgetter, itemgetter
from typing import Protocol, TypeVar

from tools.excerpt import Line, make_line
from tools.sta.figures import figure, negative_sum
from tools.sta.items import (
    EndRow,
    Item,
    LimitRow,
    Notice,
    ReportedTable,
    SlackOnlyRow,
    StaPath,
    SummaryRow,
)
from tools.sta.vendor_tables import NOTHING

SLACK = attrgetter("slack")


class Listing(Protocol):
    """The tables a report holds, as `stasummary` gathers them."""

    end_rows: list[EndRow]
    summary_rows: list[SummaryRow]
    slack_only: list[SlackOnlyRow]
    json_paths: list[StaPath]
    limits: list[LimitRow]
    reported: list[ReportedTable]


def table_lines(report: Listing) -> list[Line]:
    """One line per `-format end` or `report_constraint` table title and scenario (a hold table
    never beside a setup one), one for all `summary` rows, at the worst row; each `slack_only`
    row and each table of figures as reported."""
    tables: list[tuple[str, list[EndRow] | list[SummaryRow]]] = [
        (_end_table(title, corner), rows)
        for (title, corner), rows in _grouped(
            report.end_rows, attrgetter("check", "corner")
        ).items()
    ]
    tables.append(("summary table", report.summary_rows))
    lines = [_table_line(name, rows) for name, rows in tables if rows]
    for row in report.slack_only:
        text = f"slack_only table: group {row.group} slack {figure(row.slack)} (as reported)"
        lines.append(make_line(row.line, text))
    lines += _json_lines(report.json_paths)
    for check, rows in _grouped(report.limits, attrgetter("check")).items():
        sections = _grouped(rows, attrgetter("corner"))
        lines += [_limit_line(check, corner, section) for corner, section in sections.items()]
        if len(sections) > 1:
            lines.append(_across_line(check, sections, rows))
    return lines + [line for table in report.reported for line in reported_lines(table)]


def _end_table(title: str | None, corner: str | None) -> str:
    name = f"end table {title}" if title else "end table"
    return f"{name} (corner {corner})" if corner else name


def reported_lines(table: ReportedTable) -> list[Line]:
    """A line per group of figures (a column, a rule, a view), at the line its first figure is
    on (a block of `Label: value` lines at its title): `title, group: name value, … (as
    reported)`, every value as printed."""
    if not table.figures:
        return [make_line(table.first, f"{table.title}: no figures (as reported)")]
    lines = []
    for group, figures in _grouped(table.figures, itemgetter(0)).items():
        pairs = ", ".join(f"{name} {value}" for _, name, value, _ in figures)
        where = f"{table.title}, {group}" if group else table.title
        at = min(line for *_, line in figures) if group else table.first
        lines.append(make_line(at, f"{where}: {pairs} (as reported)"))
    return lines


T = TypeVar("T")
K = TypeVar("K")


def _grouped(items: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """The items by key, keys in the order they first appear."""
    groups: dict[K, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def _json_lines(paths: list[StaPath]) -> list[Line]:
    """One line per group and path type of the `-format json` paths, at the document's end."""
    lines = []
    graded = (path for path in paths if path.slack is not None)
    for key, rows in _grouped(graded, attrgetter("group", "path_type")).items():
        worst = min(rows, key=SLACK)
        violating = sum(path.status == "VIOLATED" for path in rows)
        tns = negative_sum(path.slack for path in rows)
        text = (
            f"json group {key[0]} type {key[1]}: {len(rows)} path(s), {violating} violating, "
            f"worst slack {figure(worst.slack or 0.0)} at {worst.endpoint}, TNS {figure(tns)} (json paths)"
        )
        lines.append(make_line(worst.last_line, text))
    return lines


def _limit_line(check: str, corner: str | None, rows: list[LimitRow]) -> Line:
    """A `report_check_types` or design rule section of one corner: violations of its own kind,
    never mixed with paths nor with another corner's rows."""
    violating = [row for row in rows if row.status == "VIOLATED"]
    graded = [row for row in rows if row.slack is not None]
    worst = min(graded, key=SLACK) if graded else rows[0]
    where = (
        f"worst slack {figure(worst.slack)} at {worst.pin}"
        if worst.slack is not None
        else f"first at {worst.pin}"
    )
    name = f"{check} (corner {corner})" if corner else check
    text = f"{name}: {len(rows)} {worst.element}(s), {len(violating)} violating, {where} (limit checks, as reported)"
    return make_line(worst.line, text)


def _across_line(
    check: str, sections: Mapping[str | None, list[LimitRow]], rows: list[LimitRow]
) -> Line:
    """A check listed under several corners, totalled as such: rows over corners, and the
    distinct pins they name (one pin in three corners is one pin, three rows)."""
    pins = {row.pin for row in rows}
    violating = {row.pin for row in rows if row.status == "VIOLATED"}
    unnamed = " (one section names no corner)" if None in sections else ""
    element = rows[0].element
    text = (
        f"{check} across {len(sections)} corners{unnamed}: {len(rows)} {element} rows, "
        f"{len(pins)} distinct {element}s, {len(violating)} distinct violating (limit checks, as reported)"
    )
    return make_line(max(row.line for row in rows), text)


def _table_line(name: str, rows: Sequence[EndRow | SummaryRow]) -> Line:
    worst = min(rows, key=SLACK)
    if all(row.status is not None for row in rows):
        violating = f"{sum(row.status == 'VIOLATED' for row in rows)} violating"
    else:
        violating = (
            f"{sum(row.slack < 0 for row in rows)} with negative slack (no MET/VIOLATED given)"
        )
    tns = negative_sum(row.slack for row in rows)
    text = (
        f"{name}: {len(rows)} row(s), {violating}, worst slack {figure(worst.slack)} at "
        f"{worst.endpoint}, TNS {figure(tns)} (table rows, counted apart from the paths)"
    )
    return make_line(worst.line, text)


_TABLE_GROUP = re.compile(r"(?: group (\S+)|\('([^']*)' group\))$")
"""The group in a table's title: OpenSTA's `max_delay/setup group clk`, Synopsys'
`max_delay/setup ('clk' group)`."""


def table_group(row: EndRow) -> str | None:
    found = _TABLE_GROUP.search(row.check or "")
    return (found[1] or found[2]) if found else None


@dataclass
class TableSelection:
    """What `stapaths` takes from a report besides its paths: the `limit` worst table rows of the
    group and status asked (`-format end`, `report_constraint`), ranked as paths are; the
    report's statements that it holds nothing (a true zero, quoted with its line); and its design
    rule rows and tables of its own figures, which list no path (how many, and where, is said)."""

    group: str | None
    status: str | None
    limit: int
    rows: int = 0
    matching: int = 0
    worst: list[tuple[float, int, EndRow]] = field(default_factory=list)
    """A heap of the worst matching rows kept (slack negated, order seen, row)."""
    limits: int = 0
    """Design rule rows (`LimitRow`): checks of pins or nets, not paths; counted and said."""
    statements: list[Notice] = field(default_factory=list)
    tables: list[ReportedTable] = field(default_factory=list)
    order: count[int] = field(default_factory=count)

    def add(self, item: Item | object) -> None:
        if isinstance(item, EndRow):
            self.rows += 1
            if (self.group is None or table_group(item) == self.group) and (
                self.status is None or item.status == self.status
            ):
                self.matching += 1
                entry = (-item.slack, next(self.order), item)
                if len(self.worst) < self.limit:
                    heapq.heappush(self.worst, entry)
                elif entry > self.worst[0]:
                    heapq.heapreplace(self.worst, entry)
        elif isinstance(item, LimitRow):
            self.limits += 1
        elif isinstance(item, Notice) and NOTHING.match(item.text):
            self.statements.append(item)
        elif isinstance(item, ReportedTable):
            self.tables.append(item)

    def shown(self) -> list[EndRow]:
        return [row for _, _, row in sorted(self.worst, key=lambda entry: (-entry[0], entry[1]))]

    def lines(self) -> list[Line]:
        return [make_line(row.line, describe_row(row)) for row in self.shown()]

    @property
    def truncated(self) -> bool:
        return self.matching > len(self.worst)

    def said(self) -> str:
        text = ""
        if self.rows:
            text += f"; {len(self.worst)} of {self.matching} matching table row(s), worst first"
        if self.limits:
            text += f"; {self.limits} design rule row(s), limit checks not paths (stasummary shows them)"
        for notice in self.statements:
            text += f"; the report says: {notice.text} (L{notice.line})"
        if self.tables:
            at = ", ".join(f"L{table.first}" for table in self.tables)
            text += (
                f"; {len(self.tables)} table(s) of the report's own figures, at {at}, list no "
                "path (stasummary shows them)"
            )
        return text


def describe_row(row: EndRow) -> str:
    where = f"{row.check} (scenario {row.corner})" if row.corner else row.check or "end table"
    return (
        f"{row.endpoint} · slack {figure(row.slack)} ({row.status}) · {where} · table row: "
        f"required {figure(row.required)}, actual {figure(row.arrival)}"
    )
