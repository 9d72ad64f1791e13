"""The analysis sandbox's process: one per call, a fork of the tools' forkserver, bounded whole.

DuckDB's `memory_limit` covers its buffer manager only: a function's own allocations (the matrix
of `damerau_levenshtein`, a regular expression's state, a list built row by row) are outside it.
So the query runs in a process of its own whose address space is limited (`RLIMIT_AS`: what it
holds when it starts, plus `ADDRESS_SPACE`): an allocation past it fails (DuckDB's out-of-memory
error) or ends the process, never the run's. The parent (`tools/analysis/sandbox.py`) kills it at
the call's time limit.

In it, a connection with a private temp directory (DuckDB allows its temp directory with external
access off; its default is `<cwd>/.tmp`) loads the tables from the private files the parent wrote,
then turns external access off and locks its configuration, runs the query on one thread, and
sends back its columns, its first `MAX_ROWS` rows and its row count. This module imports DuckDB
and the standard library only: the forkserver preloads it.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import decimal
import os
import resource
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

MEMORY_LIMIT = "256MB"
"""DuckDB's buffer manager: tables, hash tables, sorts (spilled past it to the temp directory)."""
ADDRESS_SPACE = 768 << 20
"""What the query's process may add to its address space, all allocations counted."""
MAX_ROWS = 200
"""Result rows kept on the receipt; the rest are counted."""
MAX_CELL_CHARS = 200
SETTINGS: dict[str, str | int | float | bool | list[str]] = {
    "memory_limit": MEMORY_LIMIT,
    "threads": 1,
    "python_enable_replacements": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}
M_ARENA_MAX = -8
"""glibc's `mallopt` option: how many malloc arenas the process may make (each thread its own by
default, 64 MiB of address space reserved apiece)."""

Cell = str | int | float | bool | None


@dataclass(frozen=True)
class TableFile:
    """A record's rows in a private file, and how DuckDB reads it (made by
    `tools.analysis.tables`, defined here so that the sandbox's process imports nothing more)."""

    name: str
    path: Path
    delimiter: str
    columns: dict[str, str] | None
    """Column → DuckDB type; None: the header names them and DuckDB sniffs their types."""
    unread: str = ""
    """What of its record the table does not hold (an STA report's lines not read, named), said
    with every answer over it: a count over the table is over what was read."""


@dataclass(frozen=True)
class Job:
    query: str
    tables: tuple[TableFile, ...]
    spill: str
    """The call's private, empty temp directory."""


@dataclass(frozen=True)
class Answer:
    """The query's result, or why there is none (`refused`: `invalid_argument`, one line)."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Cell, ...], ...] = ()
    total: int = 0
    refused: str | None = None


def serve(channel: Connection, job: Job) -> None:
    """The process's work: bound its memory, run `job`, send the answer."""
    _bound_memory()
    try:
        answer = run(job)
    except MemoryError:
        answer = Answer(refused=memory_detail())
    channel.send(answer)
    channel.close()


def memory_detail() -> str:
    return (
        f"the query passed the sandbox's memory limit ({MEMORY_LIMIT} of DuckDB buffers,"
        f" {ADDRESS_SPACE >> 20} MiB of address space for its process)"
    )


def run(job: Job) -> Answer:
    """`job`'s query over its tables, in a locked connection."""
    import duckdb  # preloaded in the forkserver (tools/workers.py): a worker finds it loaded

    connection = duckdb.connect(":memory:", config={**SETTINGS, "temp_directory": job.spill})
    try:
        connection.execute("SET enable_progress_bar = false")  # a session option: not in `config`
        for table in job.tables:
            connection.execute(load_statement(table), [str(table.path)])
        connection.execute("SET enable_external_access = false")
        connection.execute("SET lock_configuration = true")
        cursor = connection.execute(job.query)
        columns = tuple(column[0] for column in cursor.description or ())
        rows = cursor.fetchmany(MAX_ROWS)
        total = len(rows) + sum(1 for _ in iter(cursor.fetchone, None))
    except duckdb.OutOfMemoryException:
        return Answer(refused=memory_detail())
    except duckdb.PermissionException as exc:
        return Answer(refused=f"the sandbox refused it: {_first_line(exc)}")
    except duckdb.Error as exc:
        return Answer(refused=f"the query failed: {_first_line(exc)}")
    finally:
        connection.close()
    return Answer(columns, tuple(tuple(_cell(value) for value in row) for row in rows), total)


def load_statement(table: TableFile) -> str:
    """`CREATE TABLE name AS SELECT * FROM read_csv(?, …)`: the name is a checked identifier
    (`tools.analysis.query.TABLE_NAME`), the path a parameter."""
    options = f"header = true, delim = '{table.delimiter}', sample_size = -1"
    if table.columns is not None:
        typed = ", ".join(f"'{name}': '{kind}'" for name, kind in table.columns.items())
        options += f", columns = {{{typed}}}"
    return f'CREATE TABLE "{table.name}" AS SELECT * FROM read_csv(?, {options})'


def _bound_memory() -> None:
    """One malloc arena (so that the limit counts memory, not per-thread reservations), then the
    address space this process holds now plus `ADDRESS_SPACE` (never above a limit it was given
    already)."""
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)
    limit = _address_space() + ADDRESS_SPACE
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _address_space() -> int:
    """This process's address space in bytes (`/proc/self/statm`; 0 where there is no `/proc`,
    so that the limit is `ADDRESS_SPACE` itself)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
    except OSError:
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


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
