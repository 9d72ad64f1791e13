"""The `analyze` call's arguments: one read-only SELECT, and the approved records it reads as tables.

The statement is parsed here (DuckDB's own parser), so a second statement, a `COPY`, an `ATTACH`,
an `INSTALL` or a `PRAGMA` is refused by the guard before anything runs, and a call naming a file
function (`read_csv('/etc/passwd')`) is refused by name. None of this is the boundary: the query
runs in a connection with external access off and its configuration locked
(`tools/analysis/sandbox.py`), which refuses any file or network access whatever the text says.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import duckdb
from pydantic import AfterValidator, Field, StringConstraints, model_validator

from tools.args import RecordId, ToolArgs
from tools.logs.familytools import FamilyName
from tools.strict import StrictModel

VERDICTS = "verdicts"
"""The table a family of logs is read into."""
MAX_QUERY_CHARS = 4000
MAX_TABLES = 8
TABLE_NAME = r"^[a-z][a-z0-9_]{0,30}$"
FILE_FUNCTIONS = re.compile(
    r"\b(read_\w+|\w+_scan|glob|parquet_\w+|sniff_csv|query_table|query|duckdb_\w+)\s*\(",
    re.IGNORECASE,
)
"""Table functions that reach outside the tables given (files, other catalogs, the engine's own
settings): refused by name, with the sandbox behind them."""


def _one_select(query: str) -> str:
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise ValueError(f"not SQL DuckDB can parse: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise ValueError(f"one statement only ({len(statements)} given)")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise ValueError(f"a SELECT only ({kind.name} given): analysis reads, it never writes")
    if found := FILE_FUNCTIONS.search(query):
        raise ValueError(f"{found.group(1)}() is not allowed: the query reads only its tables")
    return query


Query = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS),
    AfterValidator(_one_select),
]
TableName = Annotated[str, StringConstraints(pattern=TABLE_NAME)]


class Plot(StrictModel):
    kind: Literal["bar", "line", "histogram"]
    x: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """A result column (bar and line: the categories or positions; histogram: the values)."""
    y: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    """A numeric result column (bar and line); none for a histogram."""
    title: Annotated[str, StringConstraints(max_length=120)] = ""


class AnalyzeArgs(ToolArgs):
    query: Query
    """One SELECT over the tables below (DuckDB SQL)."""
    tables: Annotated[dict[TableName, RecordId], Field(max_length=MAX_TABLES)] = {}
    """Table name → the exact id of an approved `history` or `sta_report` record."""
    family: FamilyName | None = None
    """A family of logs (a manifest glob as written, or log record ids), read as triage reads it
    into table `verdicts`: member, test, status, signature, note."""
    plot: Plot | None = None
    """A figure of the result, drawn into the report's artifacts."""

    @model_validator(mode="after")
    def _something_to_read(self) -> AnalyzeArgs:
        if not self.tables and self.family is None:
            raise ValueError("name at least one table or a family")
        if VERDICTS in self.tables and self.family is not None:
            raise ValueError(f"table {VERDICTS!r} is the family's")
        return self
