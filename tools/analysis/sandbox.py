"""The analysis sandbox: an in-process DuckDB that holds only the tables it was given.

Tables are loaded from the private files `tools/analysis/tables.py` wrote; then external access is
turned off (no file, no network, no extension) and the configuration locked, so that no statement
can turn it back on. The query runs on one thread under a memory limit, and is interrupted at the
call's time limit; at most `MAX_ROWS` rows of its result are kept.
"""

from __future__ import annotations

import datetime
import decimal
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb

from contract.codes import RefusalCode
from tools.analysis.tables import TableFile
from tools.errors import RecordRefusal
from tools.records.reading import check_time, deadline

MEMORY_LIMIT = "256MB"
MAX_ROWS = 200
"""Result rows kept on the receipt; the rest are counted."""
MAX_CELL_CHARS = 200
SETTINGS: dict[str, str | int | float | list[str]] = {
    "memory_limit": MEMORY_LIMIT,
    "threads": 1,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}

Cell = str | int | float | bool | None


@dataclass(frozen=True)
class Result:
    """What a query computed: its columns, its first `MAX_ROWS` rows, and how many there were."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    total: int


def run_query(query: str, tables: Sequence[TableFile], seconds: float | None = None) -> Result:
    """`query` over `tables`, in a locked connection; a `RecordRefusal` when the sandbox refuses
    it, it fails, passes its memory limit or is cut by the time limit."""
    with _locked(tables) as connection, _interrupted(connection, seconds) as cut:
        try:
            cursor = connection.execute(query)
            columns = tuple(column[0] for column in cursor.description or ())
            rows = cursor.fetchmany(MAX_ROWS)
            total = len(rows) + sum(1 for _ in iter(cursor.fetchone, None))
        except duckdb.InterruptException:
            if not cut.is_set():
                raise
            check_time()  # the reading session's own cut: its time limit or the run's deadline
            raise _cut(seconds) from None
        except duckdb.OutOfMemoryException:
            raise RecordRefusal(
                RefusalCode.INVALID_ARGUMENT,
                f"the query passed the sandbox's memory limit ({MEMORY_LIMIT})",
            ) from None
        except duckdb.PermissionException as exc:
            raise RecordRefusal(
                RefusalCode.INVALID_ARGUMENT, f"the sandbox refused it: {_first_line(exc)}"
            ) from None
        except duckdb.Error as exc:
            raise RecordRefusal(
                RefusalCode.INVALID_ARGUMENT, f"the query failed: {_first_line(exc)}"
            ) from None
    return Result(columns, tuple(tuple(_cell(value) for value in row) for row in rows), total)


@contextmanager
def _locked(tables: Sequence[TableFile]) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection holding `tables`, external access off and locked. Its temp directory is a
    private, empty folder of the call: DuckDB allows its temp directory with external access off,
    and its default is `<cwd>/.tmp`, which anything may have written to."""
    with tempfile.TemporaryDirectory(prefix="warrant-spill-") as spill:
        connection = duckdb.connect(":memory:", config={**SETTINGS, "temp_directory": spill})
        try:
            yield _loaded(connection, tables)
        finally:
            connection.close()


def _loaded(
    connection: duckdb.DuckDBPyConnection, tables: Sequence[TableFile]
) -> duckdb.DuckDBPyConnection:
    for table in tables:
        connection.execute(_load_statement(table), [str(table.path)])
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")
    return connection


def _load_statement(table: TableFile) -> str:
    """`CREATE TABLE name AS SELECT * FROM read_csv(?, …)`: the name is a checked identifier
    (`tools.analysis.query.TABLE_NAME`), the path a parameter."""
    options = f"header = true, delim = '{table.delimiter}', sample_size = -1"
    if table.columns is not None:
        typed = ", ".join(f"'{name}': '{kind}'" for name, kind in table.columns.items())
        options += f", columns = {{{typed}}}"
    return f'CREATE TABLE "{table.name}" AS SELECT * FROM read_csv(?, {options})'


@contextmanager
def _interrupted(
    connection: duckdb.DuckDBPyConnection, seconds: float | None
) -> Iterator[threading.Event]:
    """Interrupts the connection when the call's time is up (the sooner of `seconds` and the
    reading session's deadline); the event says it was the timer."""
    until = deadline()
    left = None if until is None else until - time.monotonic()
    limits = [value for value in (seconds, left) if value is not None]
    fired = threading.Event()

    def interrupt() -> None:
        fired.set()
        connection.interrupt()

    timer = threading.Timer(max(0.0, min(limits)), interrupt) if limits else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield fired
    finally:
        if timer is not None:
            timer.cancel()


def _cut(seconds: float | None) -> RecordRefusal:
    shown = f" ({seconds:g}s)" if seconds is not None else ""
    return RecordRefusal(RefusalCode.TOOL_TIMEOUT, f"the query ran past its time limit{shown}")


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:300]


def _cell(value: Any) -> Cell:
    """A JSON value for the receipt: numbers, text, booleans and nulls as they are; exact decimals,
    dates and the rest as their text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value[:MAX_CELL_CHARS] if isinstance(value, str) else value
    if isinstance(value, decimal.Decimal | datetime.date | datetime.datetime | datetime.time):
        return str(value)
    return str(value)[:MAX_CELL_CHARS]
