"""Every use Warrant makes of the private members of LangGraph's SQLite and PostgreSQL savers and
stores (`langgraph-checkpoint-sqlite`, `langgraph-checkpoint-postgres`), in one place.

A run's record is written in its checkpoint's round trip or transaction (`ledger.persistence.lease`,
`sqlite_lease`, `served_store`): that needs the store's own SQL for a batch of puts on a cursor
Warrant holds, and a hook on the cursor each saver opens for its writes. Neither is public API, so
pyproject.toml bounds both packages to the minor releases tested, and
`tests/ledger/persistence/test_private_api.py` checks each member's signature against what is
passed here and exercises each call, so that a release that changes one fails there, by name.

The savers' cursor hooks are overridden under a name of Warrant's (`statement_cursor`): subclasses
override that, never the private member itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import PutOp
from langgraph.store.postgres import PostgresStore
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg import AsyncCursor, Cursor
from psycopg.rows import DictRow


def queue_puts(store: PostgresStore, puts: Sequence[PutOp], cur: Cursor[DictRow]) -> None:
    """`PostgresStore._batch_put_ops(put_ops, cur)`: the store's own upserts and deletes for `puts`
    (pairs of index and op), executed on `cur` only: in the caller's pipeline, not a round trip
    of the store's."""
    store._batch_put_ops(list(enumerate(puts)), cur)


async def aqueue_puts(
    store: AsyncPostgresStore, puts: Sequence[PutOp], cur: AsyncCursor[DictRow]
) -> None:
    """`AsyncPostgresStore._batch_put_ops(put_ops, cur)`, a coroutine: as `queue_puts`."""
    await store._batch_put_ops(list(enumerate(puts)), cur)


def write_puts(store: SqliteStore, puts: Sequence[PutOp], cur: sqlite3.Cursor) -> None:
    """`SqliteStore._batch_put_ops(put_ops, cur)`: as `queue_puts`, on a cursor of another
    connection to the same file (the saver's, in its transaction); the store's statements name
    only its own tables."""
    store._batch_put_ops(list(enumerate(puts)), cur)


def store_transaction(store: SqliteStore) -> AbstractContextManager[sqlite3.Cursor]:
    """`SqliteStore._cursor(transaction=True)`: a cursor between BEGIN and COMMIT, under the
    store's lock, the store set up first."""
    return store._cursor(transaction=True)


class HookedPostgresSaver(PostgresSaver):
    """`PostgresSaver._cursor(*, pipeline)`: the saver opens every statement's cursor there, and
    `put` and `put_writes` open theirs with `pipeline=True` (one round trip, committed when the
    context exits). Overridden as `statement_cursor`."""

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        with self.statement_cursor(pipeline=pipeline) as cur:
            yield cur

    @contextmanager
    def statement_cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        with PostgresSaver._cursor(self, pipeline=pipeline) as cur:
            yield cur


class HookedAsyncPostgresSaver(AsyncPostgresSaver):
    """`AsyncPostgresSaver._cursor(*, pipeline)`, an async context manager: as
    `HookedPostgresSaver`, for `aput` and `aput_writes`."""

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        async with self.statement_cursor(pipeline=pipeline) as cur:
            yield cur

    @asynccontextmanager
    async def statement_cursor(
        self, *, pipeline: bool = False
    ) -> AsyncIterator[AsyncCursor[DictRow]]:
        async with AsyncPostgresSaver._cursor(self, pipeline=pipeline) as cur:
            yield cur


class HookedSqliteSaver(SqliteSaver):
    """`SqliteSaver.cursor(transaction)` (public in name, "used internally by the SqliteSaver and
    should not be called directly"): `put` and `put_writes` write through `cursor()`, which
    commits when the context exits; reads pass `transaction=False`. Overridden as
    `statement_cursor`."""

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with self.statement_cursor(transaction=transaction) as cur:
            yield cur

    @contextmanager
    def statement_cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with SqliteSaver.cursor(self, transaction) as cur:
            yield cur
