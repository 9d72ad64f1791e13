"""A run's record written in its checkpoint's round trip, on the connection that holds its lease.

On PostgreSQL a run's checkpoints and its record (LangGraph's store, `ledger.store`) share the
lease's connection (`ledger.persistence.savers.postgres_lease`). A step's record used to be a store
batch of its own, a round trip before the checkpoint's: now the step hands it over (`defer`, from
`ledger.staged.StagedWrites.flush`) and the saver sends it first in the pipeline of its next write
(the task's writes, or the checkpoint), so the record reaches PostgreSQL in the same round trip as
the state that points to it, and before it (one pipeline runs its statements in order, and a
failed statement skips the rest). Until then this process reads it back from the hand-over, so
the next step sees what the last one wrote. What is not yet sent is sent when the lease ends.

The run's `control` items (a person's stop and corrections, written by other processes:
`nodes.control`) ride the same pipeline back: each pipelined write also reads them, and the guard's
read of them at its next turn is answered from that read (once a step has written nothing since),
where it was a round trip of its own. What the guard sees is as fresh as the step's checkpoint.

A write asked of the store itself (`batch`: a call's intent before its tool runs) is sent at once,
after whatever waits. `count_attempt` records a call's intent and returns its attempt in one
statement, where reading the count and writing one more took two round trips.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from langgraph.store.base import GetOp, Item, Op, PutOp, Result
from langgraph.store.postgres import PostgresStore
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from ledger.persistence.private_api import queue_puts
from ledger.persistence.pruning import PrunablePostgresSaver
from ledger.persistence.waiting import WaitingStore

_COUNT_ATTEMPT = """
INSERT INTO store (prefix, key, value, created_at, updated_at)
VALUES (%(prefix)s, %(key)s, %(value)s, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)
ON CONFLICT (prefix, key) DO UPDATE
SET value = jsonb_set(EXCLUDED.value, '{attempts}', to_jsonb(1 + CASE
        WHEN jsonb_typeof(store.value -> 'attempts') = 'number'
         AND store.value ->> 'attempts' ~ '^[1-9][0-9]{0,17}$'
        THEN (store.value ->> 'attempts')::bigint ELSE 1 END)),
    updated_at = CURRENT_TIMESTAMP
RETURNING (value ->> 'attempts')::bigint AS attempts
"""
"""An item without a plausible count (a positive integer) says at least one attempt started, as
`ledger.intents` reads it."""


_WATCHED = "SELECT key, value FROM store WHERE prefix = %(prefix)s"


def counted_attempt(
    cur: Cursor[DictRow], namespace: tuple[str, ...], key: str, mark: dict[str, Any]
) -> int:
    """`mark` (with `attempts: 1` for a first attempt) written under the store's `key` in one
    upsert that counts one more attempt than the item held; the attempt."""
    value = Jsonb({**mark, "attempts": 1})
    cur.execute(_COUNT_ATTEMPT, {"prefix": ".".join(namespace), "key": key, "value": value})
    row = cur.fetchone()
    assert row is not None  # an upsert with RETURNING returns its row
    return int(row["attempts"])


class LeaseStore(WaitingStore[PostgresStore, Cursor[DictRow]]):
    """The run's store on its lease connection: a step's record handed over to the saver
    (`defer`), its other statements planned for their values (never prepared: a read prepared
    while the store is nearly empty keeps a generic plan that reads every row of a namespace, and
    a long run's steps slowed as it grew; the checkpointer's statements stay prepared)."""

    def __init__(
        self,
        store: PostgresStore,
        clock: Callable[[], float] = time.time,
        watched: Callable[[str], tuple[str, ...]] | None = None,
    ) -> None:
        if not isinstance(store.conn, psycopg.Connection):
            raise TypeError("a LeaseStore is made on one connection, not on a pool")
        super().__init__(store, clock)
        self.conn: psycopg.Connection[DictRow] = store.conn
        self.lock = store.lock  # the connection's, which the saver takes too
        self._watched = watched
        """The namespace others write for a thread's run (its control), read with every
        pipelined write for that thread."""
        self._seen: tuple[tuple[str, ...], dict[str, Any]] | None = None
        """That namespace and its items as the last pipelined write read them; None once this
        process wrote since."""

    # The step's record, handed over.

    def defer(self, puts: Sequence[PutOp], scope: str = "") -> None:
        """As the base does; a step ended: what was read of the watched namespace is older than
        the next write's read."""
        super().defer(puts, scope)
        self._seen = None

    def watch(self, thread: str | None) -> tuple[tuple[str, ...], Cursor[DictRow]] | None:
        """Queue the read of `thread`'s watched namespace in the pipeline under way."""
        if self._watched is None or thread is None:
            return None
        namespace = self._watched(thread)
        cur = self.conn.cursor()
        cur.execute(_WATCHED, {"prefix": ".".join(namespace)})
        return namespace, cur

    def saw(self, watching: tuple[tuple[str, ...], Cursor[DictRow]]) -> None:
        """Keep what the pipeline's read found (once it has committed)."""
        namespace, cur = watching
        with cur:
            self._seen = namespace, {row["key"]: row["value"] for row in cur.fetchall()}

    def _send(self, puts: list[PutOp], cur: Cursor[DictRow]) -> None:
        queue_puts(self.store, puts, cur)

    @contextmanager
    def _round_trip(self) -> Iterator[Cursor[DictRow]]:
        """One pipeline on the lease connection, under its lock, unprepared."""
        with self.lock, self._unprepared(), self.conn.pipeline(), self.conn.cursor() as cur:
            yield cur

    # The store's own operations.

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if (seen := self._from_watch(ops)) is not None:
            return seen
        return super().batch(ops)

    def _from_watch(self, ops: list[Op]) -> list[Result] | None:
        """Reads of the watched namespace only, answered from the last pipelined write's read."""
        if self._seen is None or not ops:
            return None
        watched, seen = self._seen
        if not all(isinstance(op, GetOp) and tuple(op.namespace) == watched for op in ops):
            return None
        at = datetime.fromtimestamp(self._clock(), UTC)
        return [
            Item(
                value=seen[op.key], key=op.key, namespace=op.namespace, created_at=at, updated_at=at
            )
            if isinstance(op, GetOp) and op.key in seen
            else None
            for op in ops
        ]

    def _store_batch(self, ops: list[Op]) -> list[Result]:
        with self.lock, self._unprepared():
            return self.store.batch(ops)

    def count_attempt(self, namespace: tuple[str, ...], key: str, mark: dict[str, Any]) -> int:
        """Record a call's intent and return its attempt, in one statement, after whatever
        waits (in the same pipeline)."""
        with self._round_trip() as cur:
            puts = self.send_waiting(cur)
            attempt = counted_attempt(cur, namespace, key, mark)
        self.sent(puts)
        return attempt

    @contextmanager
    def _unprepared(self) -> Iterator[None]:
        threshold = self.conn.prepare_threshold
        self.conn.prepare_threshold = None
        try:
            yield
        finally:
            self.conn.prepare_threshold = threshold


class LeaseSaver(PrunablePostgresSaver):
    """LangGraph's saver on the lease connection, whose every pipelined write (a task's writes, a
    checkpoint) first sends the record the store holds for it (`LeaseStore.defer`)."""

    def __init__(self, conn: psycopg.Connection[DictRow], store: LeaseStore) -> None:
        super().__init__(conn)
        self.lock = store.lock  # a reentrant lock (`postgres_lease`) serves
        self.record = store
        self._writing: str | None = None
        """The thread whose checkpoint or task writes are being written."""

    def put(self, config: Any, *args: Any, **kwargs: Any) -> Any:
        self._writing = str(config["configurable"]["thread_id"])
        return super().put(config, *args, **kwargs)

    def put_writes(self, config: Any, *args: Any, **kwargs: Any) -> None:
        self._writing = str(config["configurable"]["thread_id"])
        super().put_writes(config, *args, **kwargs)

    @contextmanager
    def statement_cursor(self, *, pipeline: bool = False) -> Iterator[Cursor[DictRow]]:
        with super().statement_cursor(pipeline=pipeline) as cur:
            puts = self.record.send_waiting(cur) if pipeline else []
            watching = self.record.watch(self._writing) if pipeline else None
            yield cur
        self.record.sent(puts)  # the pipeline has committed
        if watching is not None:
            self.record.saw(watching)
