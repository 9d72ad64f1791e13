"""The `analyze` call's arguments: one read-only SELECT, and the approved records it reads as tables.

The statement is parsed here (DuckDB's own parser), so a second statement, a `COPY`, an `ATTACH`,
an `INSTALL` or a `PRAGMA` is refused by the guard before anything runs; its parse tree is then
walked (`tools/analysis/sqlcheck.py`): every table one the call names, no table function, only
allowed functions. Behind the guard, the query runs in a child process with external access off,
its configuration locked and its memory bounded (`tools/analysis/sandbox.py`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from contract.strict import StrictModel
from tools.analysis.sqlcheck import QueryProblem, check_query
from tools.args import Names, RecordId, ToolArgs
from tools.logs.familytools import FamilyName

VERDICTS = "verdicts"
"""The table a family of logs is read into."""
MAX_QUERY_CHARS = 4000
MAX_TABLES = 8
TABLE_NAME = r"^[a-z][a-z0-9_]{0,30}$"


def _one_select(query: str) -> str:
    import duckdb  # here: the catalog is imported by every command, DuckDB only by analysis

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise ValueError(f"not SQL DuckDB can parse: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise ValueError(f"one statement only ({len(statements)} given)")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise ValueError(f"a SELECT only ({kind.name} given): analysis reads, it never writes")
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
    tables: Annotated[
        dict[TableName, RecordId],
        Field(max_length=MAX_TABLES),
        Names("tables", ("history", "sta_report")),
    ] = {}
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

    @model_validator(mode="after")
    def _reads_only_its_tables(self) -> AnalyzeArgs:
        """The query's parse tree reads only this call's tables and calls only allowed
        functions: refused on `query` otherwise, naming the reference."""
        names = [*self.tables, *([VERDICTS] if self.family is not None else [])]
        try:
            check_query(self.query, names)
        except QueryProblem as problem:
            error = PydanticCustomError("value_error", "{problem}", {"problem": str(problem)})
            details = InitErrorDetails(type=error, loc=("query",), input=self.query)
            raise ValidationError.from_exception_data(type(self).__name__, [details]) from None
        return self
