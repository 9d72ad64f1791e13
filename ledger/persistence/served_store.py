"""The LangGraph server's store on PostgreSQL: a node's calls do not wait on the server's event
loop, and a step's record goes in its checkpoint's round trip.

The server gives the graph an asynchronous store; a sync node (each of Warrant's, run in a worker
thread) that calls it hands every call to the event loop and waits (`run_coroutine_threadsafe`),
while the loop also serves HTTP, the run queue and the checkpointer. Profiled on one replica
(`bench/profile_served.py`), those waits were a third of the replica's busy time. Here a node's
calls (`batch`, `count_attempt`) go to the same database on a synchronous pool of their own, from
the node's thread, and a step's record is handed over (`defer`) to the server's saver
(`ledger.persistence.pg_saver`), which sends it first in its next pipelined write for the run's
thread, as the embedded lease does (`ledger.persistence.lease`). The server's own calls (its store
API, the memory graph's async nodes) stay on the asynchronous path, LangGraph's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import psycopg
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.postgres import PostgresStore
from langgraph.store.postgres.aio import AsyncPostgresStore
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from ledger.integrity import thread_and_lane
from ledger.persistence.lease import counted_attempt
from ledger.persistence.private_api import aqueue_puts
from ledger.persistence.waiting import WaitingWrites, batch_through

WAITING = WaitingWrites()
"""Each served run's record waiting for its thread's next checkpoint write, in this process."""
_SERVED: list[ServedStore] = []
"""The store the server opened (one a process), whose SQL the saver sends the record with."""


class ServedStore(AsyncPostgresStore):
    def __init__(
        self,
        pool: AsyncConnectionPool[AsyncConnection[DictRow]],
        sync_pool: ConnectionPool[psycopg.Connection[DictRow]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(pool)
        self.sync_pool = sync_pool
        self.sync_store = PostgresStore(sync_pool)
        self._clock = clock  # stamps an item read back before it is sent
        _SERVED[:] = [self]

    def defer(self, puts: Sequence[PutOp], scope: str) -> None:
        """A step's record, for the saver's next write of the run's thread."""
        WAITING.add(thread_and_lane(scope)[0], puts)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """From a node's thread, on the synchronous pool (never on the event loop: LangGraph's
        refuses that too), through the hand-over (`batch_through`, as the embedded lease does)."""
        return batch_through(ops, WAITING, self._clock, self.flush, self.sync_store.batch)

    def flush(self) -> None:
        """Send what waits for every thread, now, on the synchronous pool."""
        for thread, puts in WAITING.all_pending().items():
            self.sync_store.batch(puts)
            WAITING.sent(thread, puts)

    def count_attempt(self, namespace: tuple[str, ...], key: str, mark: dict[str, Any]) -> int:
        """A call's intent and its attempt in one statement (`ledger.intents`)."""
        with self.sync_pool.connection() as conn, conn.cursor() as cur:
            return counted_attempt(cur, namespace, key, mark)


async def send_waiting(thread: str, cur: AsyncCursor[DictRow]) -> list[PutOp]:
    """Queue the thread's waiting record on the saver's `cur` (in its pipeline); the puts queued,
    to be marked sent (`WAITING.sent`) once the pipeline has committed."""
    puts = WAITING.pending(thread)
    if puts and _SERVED:
        await aqueue_puts(_SERVED[0], puts, cur)
        return puts
    return []
