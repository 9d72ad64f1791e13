"""The graphs, checkpointer and store `langgraph dev` / the LangGraph server load (`langgraph.json`).

`graph` is compiled without a checkpointer: the server supplies persistence, and refuses a graph that
carries its own. `checkpointer` is the server's store, named in `langgraph.json`: PostgreSQL when
`WARRANT_DB` is a `postgresql://` URL, otherwise the same SQLite file the command line uses, so that
`warrant inbox`, `show` and `events` see the server's runs too.

Under a shared runtime (`LANGGRAPH_RUNTIME_EDITION` other than `inmem`: several replicas, one
PostgreSQL and Redis; `graph/server/replica.py`) there is no such fallback: every replica keeps runs in the
runtime's PostgreSQL (`WARRANT_DB`, else `DATABASE_URI`), and anything else stops the server at
start. A local file there would split a thread's state across machines.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from psycopg import AsyncConnection, Connection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from graph.build import compile_graph
from graph.present.langsmith_tracing import hide_served_traces
from graph.server.memory_graph import compile_memory
from ledger.persistence.locations import is_postgres, served_db
from ledger.persistence.pg_saver import WarrantPostgresSaver
from ledger.persistence.pruning import PrunableAsyncSqliteSaver
from ledger.persistence.savers import (
    FENCE_INSTALLED,
    POSTGRES_FENCE,
    SETUP_LOCK_KEY,
    SQLITE_FENCE,
    SQLITE_FENCE_SQL,
    is_old_fence,
    pool_size,
)
from ledger.persistence.served_store import ServedStore

hide_served_traces()  # before the server traces a run: never a record's excerpt to LangSmith
graph = compile_graph(served=True)
memory = compile_memory()
"""The team's notes over the API (`graph/server/memory_graph.py`), on the server's store."""


_CONNECTION = {"autocommit": True, "prepare_threshold": None, "row_factory": dict_row}
"""Every server connection's settings: autocommit, statements planned for their values."""


class _Sizing(TypedDict):
    """What the server's pools share: one connection kept open, at most `pool_size()`, each
    with `_CONNECTION`'s settings."""

    min_size: int
    max_size: int
    kwargs: dict[str, Any]


def _sizing() -> _Sizing:
    return {"min_size": 1, "max_size": pool_size(), "kwargs": _CONNECTION}


def _pool(db: str) -> AsyncConnectionPool[AsyncConnection[DictRow]]:
    """The server's pool for `db`, shared in shape by its checkpointer and its store."""
    return AsyncConnectionPool(
        db, check=AsyncConnectionPool.check_connection, open=False, **_sizing()
    )


def _sync_pool(db: str) -> ConnectionPool[Connection[DictRow]]:
    """The pool of the graph's own store calls (`ServedStore`), opened with the store."""
    return ConnectionPool(db, check=ConnectionPool.check_connection, open=True, **_sizing())


@asynccontextmanager
async def _setting_up(
    pool: AsyncConnectionPool[AsyncConnection[DictRow]],
) -> AsyncIterator[AsyncConnection[DictRow]]:
    """A connection holding the set-up lock (`ledger.persistence.savers` takes the same): replicas that
    start together create the tables one at a time."""
    async with pool.connection() as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK_KEY,))
        try:
            yield conn
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))


@asynccontextmanager
async def _set_up(
    db: str, tables: Callable[[AsyncConnection[DictRow]], Awaitable[None]]
) -> AsyncIterator[AsyncConnectionPool[AsyncConnection[DictRow]]]:
    """The server's pool for `db`, once `tables` has made what it needs (under the set-up lock)."""
    async with _pool(db) as pool:
        async with _setting_up(pool) as conn:
            await tables(conn)
        yield pool


async def _checkpoint_tables(conn: AsyncConnection[DictRow]) -> None:
    await WarrantPostgresSaver(conn).setup()
    if not await (await conn.execute(FENCE_INSTALLED)).fetchone():
        for statement in POSTGRES_FENCE:
            await conn.execute(statement)


async def _store_tables(conn: AsyncConnection[DictRow]) -> None:
    await AsyncPostgresStore(conn).setup()


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver[str]]:
    db = served_db()
    if db == "memory":
        yield InMemorySaver()
    elif is_postgres(db):
        async with _set_up(db, _checkpoint_tables) as pool:
            yield WarrantPostgresSaver(pool)
    else:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
        async with PrunableAsyncSqliteSaver.from_conn_string(db) as saver:
            await saver.setup()
            installed = await (await saver.conn.execute(SQLITE_FENCE_SQL)).fetchone()
            if is_old_fence(installed[0] if installed else None):  # made again, as the CLI does
                await saver.conn.execute("BEGIN IMMEDIATE")
                await saver.conn.execute("DROP TRIGGER warrant_fence")
            await saver.conn.execute(SQLITE_FENCE)
            await saver.conn.commit()
            yield saver


@asynccontextmanager
async def store() -> AsyncIterator[BaseStore]:
    """The server's store (named in `langgraph.json`), in the same database as `checkpointer`:
    each run's record (ledger, receipts, model calls; `ledger.store`) lives here, where
    `warrant show` and `events` read it too. On PostgreSQL the graph's own calls take a
    synchronous pool of their own (`ServedStore`)."""
    db = served_db()
    if db == "memory":
        yield InMemoryStore()
    elif is_postgres(db):
        async with _set_up(db, _store_tables) as pool:
            with _sync_pool(db) as sync_pool:
                yield ServedStore(pool, sync_pool)
    else:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteStore.from_conn_string(db) as shared:
            await shared.conn.execute("PRAGMA journal_mode=WAL")
            await shared.conn.execute("PRAGMA busy_timeout=30000")
            await shared.setup()
            yield shared
