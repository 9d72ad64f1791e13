"""The server's PostgreSQL saver: LangGraph's, with the two deletions the LangGraph server asks a
custom checkpointer for and the release the `[serve]` extra pins (langgraph-checkpoint-postgres
3.1) lacks: `adelete_for_runs` (a rolled-back run's checkpoints) and `aprune` (a thread's history,
for the server's thread TTL). Warrant's auth refuses rollback and thread deletion (`graph/server/auth.py`),
so the first serves the server's own clean-up only; both keep the tables consistent: a deleted
checkpoint's writes go with it, and a blob stays while a remaining checkpoint names its version.

One implementation in every environment (the test tools' newer saver has its own `aprune`): the
behaviour a deployment gets is the one the tests check.

Each pipelined write for a thread (a task's writes, a checkpoint) first sends the run's record that
its steps handed over (`graph.persistence.served_store`): the record reaches PostgreSQL in the same
round trip as the state that points to it, and before it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from psycopg import AsyncCursor
from psycopg.rows import DictRow

from graph.persistence.private_api import HookedAsyncPostgresSaver
from graph.persistence.served_store import WAITING, send_waiting

_WRITING_FOR: ContextVar[str | None] = ContextVar("warrant_writing_for", default=None)
"""The thread whose checkpoint or task writes are being written (`aput`, `aput_writes`)."""

STRATEGIES = ("keep_latest", "delete")

_ORPHANED_WRITES = """
DELETE FROM checkpoint_writes w WHERE w.thread_id = ANY(%(threads)s) AND NOT EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id
  AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)"""

_ORPHANED_BLOBS = """
DELETE FROM checkpoint_blobs b WHERE b.thread_id = ANY(%(threads)s) AND NOT EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id
  AND c.checkpoint_ns = b.checkpoint_ns
  AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"""

_RUNS_CHECKPOINTS = """
DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%(runs)s) RETURNING thread_id"""

_NOT_LATEST = """
DELETE FROM checkpoints c WHERE c.thread_id = ANY(%(threads)s) AND c.checkpoint_id <> (
  SELECT max(l.checkpoint_id) FROM checkpoints l
  WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)"""

_THREADS = (
    "DELETE FROM checkpoints WHERE thread_id = ANY(%(threads)s)",
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY(%(threads)s)",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY(%(threads)s)",
)


class WarrantPostgresSaver(HookedAsyncPostgresSaver):
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        token = _WRITING_FOR.set(str(config["configurable"]["thread_id"]))
        try:
            return await super().aput(config, checkpoint, metadata, new_versions)
        finally:
            _WRITING_FOR.reset(token)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        token = _WRITING_FOR.set(str(config["configurable"]["thread_id"]))
        try:
            await super().aput_writes(config, writes, task_id, task_path)
        finally:
            _WRITING_FOR.reset(token)

    @asynccontextmanager
    async def statement_cursor(
        self, *, pipeline: bool = False
    ) -> AsyncIterator[AsyncCursor[DictRow]]:
        thread = _WRITING_FOR.get() if pipeline else None
        async with super().statement_cursor(pipeline=pipeline) as cur:
            puts = await send_waiting(thread, cur) if thread is not None else []
            yield cur
        if thread is not None and puts:
            WAITING.sent(thread, puts)  # the pipeline has committed

    async def adelete_for_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints these runs wrote (their metadata's `run_id`), their writes, and
        the blobs no remaining checkpoint names."""
        runs = [str(run_id) for run_id in run_ids]
        if not runs:
            return
        async with self.statement_cursor() as cur, cur.connection.transaction():
            await cur.execute(_RUNS_CHECKPOINTS, {"runs": runs})
            threads = sorted({row["thread_id"] for row in await cur.fetchall()})
            await self._drop_orphans(cur, threads)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest`: each namespace of each thread keeps its latest checkpoint, with its
        writes (a pending interrupt among them) and the blobs it names; `delete`: nothing of the
        threads is kept."""
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread ids, not a str")
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown prune strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
        threads = [str(thread_id) for thread_id in thread_ids]
        if not threads:
            return
        async with self.statement_cursor() as cur, cur.connection.transaction():
            if strategy == "delete":
                for statement in _THREADS:
                    await cur.execute(statement, {"threads": threads})
                return
            await cur.execute(_NOT_LATEST, {"threads": threads})
            await self._drop_orphans(cur, threads)

    @staticmethod
    async def _drop_orphans(cur: AsyncCursor[DictRow], threads: list[str]) -> None:
        for statement in (_ORPHANED_WRITES, _ORPHANED_BLOBS):
            await cur.execute(statement, {"threads": threads})
