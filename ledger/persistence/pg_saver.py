"""The server's PostgreSQL saver: LangGraph's, with Warrant's retention hooks (`aprune`,
`adelete_for_runs`: `ledger.persistence.pruning`, one implementation in every environment, the
`[serve]` extra's pinned saver included), and the run's record sent with its checkpoints.

Each pipelined write for a thread (a task's writes, a checkpoint) first sends the run's record that
its steps handed over (`ledger.persistence.served_store`): the record reaches PostgreSQL in the same
round trip as the state that points to it, and before it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from psycopg import AsyncCursor
from psycopg.rows import DictRow

from ledger.persistence.pruning import PrunableAsyncPostgresSaver
from ledger.persistence.served_store import WAITING, send_waiting

_WRITING_FOR: ContextVar[str | None] = ContextVar("warrant_writing_for", default=None)
"""The thread whose checkpoint or task writes are being written (`aput`, `aput_writes`)."""


class WarrantPostgresSaver(PrunableAsyncPostgresSaver):
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
