"""Reference readings of the commercial tools' summary reports, for the tests only: a few lines of
regex and column splitting over the raw text each, written apart from `tools.sta.vendor_tables` so
that a test compares Warrant's answer with an independent reading, never with itself."""

from __future__ import annotations

import re
from dataclasses import dataclass

NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


@dataclass(frozen=True)
class Violator:
    """One `report_constraint` row: its section, the line its name is on, the name (an endpoint,
    pin or net), the scenario column if any, the slack and status."""

    section: str
    line: int
    name: str
    scenario: str | None
    slack: float
    status: str


def constraint_rows(text: str) -> list[Violator]:
    """Sections are a line holding only their title, indented three spaces; a row ends with
    `(VIOLATED)` or `(MET)`, its slack the last number before it; a row indented deeper than three
    spaces continues the name alone on the line above (DC and PrimeTime wrap long names so)."""
    rows: list[Violator] = []
    section, above = "", (0, "")
    for number, line in enumerate(text.splitlines(), 1):
        if re.fullmatch(r"   [a-z_/]+(?: \('[^']*' group\))?", line):
            section = line.strip()
            continue
        status = re.search(r"\((VIOLATED|MET)\)\s*$", line)
        if not section or not status:
            above = (number, line.strip())
            continue
        fields = re.sub(r"\([^()]*\)", " ", line[: status.start()]).split()
        numbers = [field for field in fields if NUMBER.match(field)]
        words = [field for field in fields if not NUMBER.match(field) and field not in "rf"]
        if line.startswith("    "):  # a continuation: the name is the line above
            first, name, scenario = above[0], above[1].split()[0], (words or [None])[0]
        else:
            first, name, scenario = number, words[0], (words[1:] or [None])[0]
        rows.append(Violator(section, first, name, scenario, float(numbers[-1]), status[1]))
        above = (number, line.strip())
    return rows


def totals(text: str) -> list[tuple[str, int, int, str]]:
    """(section, line, count, sum) of each DC `Total` line, with the section it closes."""
    found, section = [], ""
    for number, line in enumerate(text.splitlines(), 1):
        if re.fullmatch(r"   [a-z_/]+(?: \('[^']*' group\))?", line):
            section = line.strip()
        elif total := re.fullmatch(r"\s+Total\s+(\d+)\s+(\S+)\s*", line):
            found.append((section, number, int(total[1]), total[2]))
    return found


def pipe_cells(line: str) -> list[str]:
    """The cells of an Innovus `|`-table row, stripped (the outer bars dropped)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def innovus_mode_table(text: str) -> tuple[str, list[str], list[tuple[str, list[str]]]]:
    """The mode (`Setup mode`), its columns and its labelled rows (`WNS (ns)`, values by column)."""
    lines = text.splitlines()
    header = next(line for line in lines if re.search(r"\|\s*(Setup|Hold) mode\s*\|", line))
    mode, *columns = pipe_cells(header)
    rows = [
        (cells[0].rstrip(":"), cells[1:])
        for cells in map(pipe_cells, lines)
        if len(cells) > 1 and cells[0].endswith(":")
    ]
    return mode, columns, rows


def label_values(text: str, start: str) -> list[tuple[int, str, str]]:
    """(line, label, value) of the `Label: value` lines in the block whose title line is `start`,
    up to the first blank line (report_qor's blocks)."""
    found: list[tuple[int, str, str]] = []
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() == start:
            inside = True
        elif inside and not line.strip():
            break
        elif inside and (pair := re.fullmatch(r"\s*([^:]+):\s+(\S+)\s*", line)):
            found.append((number, pair[1], pair[2]))
    return found


def global_timing(text: str) -> dict[str, list[tuple[str, list[str]]]]:
    """Per `Setup violations` / `Hold violations` table: each of its columns with its WNS, TNS and
    NUM values (the header row is the one line of words between the table's first two rules)."""
    tables: dict[str, list[tuple[str, list[str]]]] = {}
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if line in ("Setup violations", "Hold violations"):
            columns = lines[at + 2].split()
            rows = {
                row.split()[0]: row.split()[1:]
                for row in lines[at + 4 : at + 7]
                if row.split()[:1] in (["WNS"], ["TNS"], ["NUM"])
            }
            tables[line] = [
                (column, [rows[name][index] for name in ("WNS", "TNS", "NUM")])
                for index, column in enumerate(columns)
            ]
    return tables
