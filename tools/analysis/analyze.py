"""analyze: one SELECT over approved tabular records, computed in the sandbox.

Its receipt is analysis, not a source fact (seed 001 §16: a sandbox's receipt records that a
computation took place, not that its value became a fact): the summary says so, and the receipt's
`computed` holds the query, the result's columns and first rows. Which bytes it computed over are
the receipt's `sources` (each table's record with its sha256)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scenario.registry import Family, Record
from tools.analysis.query import VERDICTS, AnalyzeArgs, Plot
from tools.analysis.sandbox import MAX_ROWS, Result, run_query
from tools.analysis.tables import table_file, verdicts_file
from tools.analysis.worker import TableFile
from tools.excerpt import Excerpt, make_excerpt, make_line
from tools.logs.familypool import Progress

TABLES_FIELD = "tables"
"""The argument that maps table names to record ids: the guard resolves each to `tables.NAME`."""
COMPUTED = "analysis, not a source fact"


def table_records(records: Mapping[str, Record]) -> dict[str, Record]:
    """Table name → its admitted record, from the executor's `tables.NAME` fields."""
    prefix = f"{TABLES_FIELD}."
    return {
        field.removeprefix(prefix): record
        for field, record in records.items()
        if field.startswith(prefix)
    }


def run(
    args: AnalyzeArgs,
    records: Mapping[str, Record],
    family: Family | None = None,
    progress: Progress | None = None,
) -> Excerpt:
    """One SQL SELECT (DuckDB) over approved run histories and STA path tables loaded as tables
    (tables maps a name to a record id; an STA report's table has corner, mode, path_type,
    path_group, endpoint, startpoint, slack, status, unconstrained, truncated, line); family reads
    a family of logs as triage does into table verdicts (member, test, status, signature, note).
    Its result is computed, never a source fact; plot draws it into the report."""
    tables = table_records(records)
    with tempfile.TemporaryDirectory(prefix="warrant-analysis-") as folder:
        files = [table_file(name, record, Path(folder)) for name, record in tables.items()]
        if family is not None:
            files.append(verdicts_file(VERDICTS, family.members, Path(folder), progress))
        result = run_query(args.query, files)
    cut = result.total > len(result.rows)
    told = [f"what table {file.name} does not hold: {file.unread}" for file in files if file.unread]
    told += ["more rows than the lines shown (the summary counts them)"] if told and cut else []
    return make_excerpt(
        _summary(result, tables, family) + _unread(files),
        [make_line(number, text) for number, text in enumerate(_lines(result), 1)],
        cut,
        told,
    ).model_copy(update={"computed": computed_of(args, result)})


def computed_of(args: AnalyzeArgs, result: Result) -> dict[str, Any]:
    return {
        "query": args.query,
        "columns": list(result.columns),
        "rows": [list(row) for row in result.rows],
        "total": result.total,
        **({"plot": _plain(args.plot)} if args.plot is not None else {}),
    }


def _plain(plot: Plot | dict[str, Any]) -> dict[str, Any]:
    """The plot as JSON: the executor builds the arguments it approved without validating them
    again (`model_construct`), so a nested model arrives as the dict the guard checked."""
    return plot.model_dump() if isinstance(plot, Plot) else Plot.model_validate(plot).model_dump()


def _summary(result: Result, tables: Mapping[str, Record], family: Family | None) -> str:
    named = [f"{name} = {record.id}" for name, record in tables.items()]
    if family is not None:
        named.append(f"{VERDICTS} = family {family.name} ({len(family.members)} logs)")
    over = ", ".join(named)
    shown = "" if result.total <= MAX_ROWS else f" (the first {MAX_ROWS} shown)"
    return f"{COMPUTED}: {result.total} row(s){shown} computed by the query over {over}"


def _unread(files: list[TableFile]) -> str:
    """Each table that does not hold all of its record, and what it misses: the result is over
    what was read, and unknown beyond it."""
    return "".join(
        f"; unknown beyond the lines read: table {file.name} holds only the paths read, "
        f"{file.unread}"
        for file in files
        if file.unread
    )


def _lines(result: Result) -> list[str]:
    """Line 1 the columns, then a row per line, cells separated by ` | `."""
    return [
        " | ".join(result.columns),
        *(" | ".join("NULL" if cell is None else str(cell) for cell in row) for row in result.rows),
    ]
