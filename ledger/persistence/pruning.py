"""Retention on Warrant's savers: `prune` (`keep_latest`, `delete`) and `delete_for_runs`, with their
asynchronous twins `aprune` and `adelete_for_runs`, which the LangGraph server asks of a custom
checkpointer (its thread TTL; a rolled-back run's clean-up). One policy for `warrant prune`
(`ledger.persistence.retention`) and the server, on SQLite and on PostgreSQL, whatever the release of
LangGraph's savers (the `[serve]` extra's PostgreSQL saver has no `prune` of its own).

What goes is checkpoints only: their pending writes, and on PostgreSQL the blobs no remaining
checkpoint names; a kept checkpoint whose parent went is left with none, as LangGraph's own prune
leaves it. The store is never touched: a run's record (ledger, evidence, model calls) goes only
with the run itself, when `warrant prune --older-than` deletes it (`retention.forget_run`).

`keep_latest` keeps each namespace's latest checkpoint (checkpoint ids are time-ordered) with its
writes, a pending question among them: the run reads its handover and resumes as before. Warrant's
graphs hold no `DeltaChannel`, whose value older checkpoints would be needed to rebuild.

`delete_for_runs` deletes the checkpoints whose metadata names one of the runs, as LangGraph's savers
do: what such a run wrote on the checkpoint it started from (a resume's answer) stays. Warrant's auth
refuses rollbacks (`graph/server/auth.py`), so the server asks it only for its own clean-up.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ledger.persistence.private_api import (
    HookedAsyncPostgresSaver,
    HookedPostgresSaver,
    HookedSqliteSaver,
)

STRATEGIES = ("keep_latest", "delete")


def checked(thread_ids: Sequence[str], strategy: str) -> list[str]:
    """The thread ids as strings, once the arguments are known to be what the hook takes."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread ids, not a str")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown prune strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
    return [str(thread_id) for thread_id in thread_ids]


# PostgreSQL: `%(threads)s` and `%(runs)s` are arrays of ids.

_PG_ORPHANS = (
    """DELETE FROM checkpoint_writes w WHERE w.thread_id = ANY(%(threads)s) AND NOT EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id
  AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)""",
    """DELETE FROM checkpoint_blobs b WHERE b.thread_id = ANY(%(threads)s) AND NOT EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id
  AND c.checkpoint_ns = b.checkpoint_ns
  AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)""",
    """UPDATE checkpoints c SET parent_checkpoint_id = NULL
WHERE c.thread_id = ANY(%(threads)s) AND c.parent_checkpoint_id IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM checkpoints p WHERE p.thread_id = c.thread_id
  AND p.checkpoint_ns = c.checkpoint_ns AND p.checkpoint_id = c.parent_checkpoint_id)""",
)
"""What no remaining checkpoint of the threads holds on to: writes, blobs, a parent link."""

_PG_PRUNE = {
    "keep_latest": (
        """DELETE FROM checkpoints c WHERE c.thread_id = ANY(%(threads)s) AND c.checkpoint_id <> (
  SELECT max(l.checkpoint_id) FROM checkpoints l
  WHERE l.thread_id = c.thread_id AND l.checkpoint_ns = c.checkpoint_ns)""",
        *_PG_ORPHANS,
    ),
    "delete": (
        "DELETE FROM checkpoints WHERE thread_id = ANY(%(threads)s)",
        "DELETE FROM checkpoint_writes WHERE thread_id = ANY(%(threads)s)",
        "DELETE FROM checkpoint_blobs WHERE thread_id = ANY(%(threads)s)",
    ),
}

_PG_RUNS = """
DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%(runs)s) RETURNING thread_id"""


class PrunablePostgresSaver(HookedPostgresSaver):
    """LangGraph's PostgreSQL saver, with Warrant's retention (the command line's)."""

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        threads = checked(thread_ids, strategy)
        if not threads:
            return
        with self.statement_cursor() as cur, cur.connection.transaction():
            for statement in _PG_PRUNE[strategy]:
                cur.execute(statement, {"threads": threads})

    def delete_for_runs(self, run_ids: Iterable[str]) -> None:
        runs = [str(run_id) for run_id in run_ids]
        if not runs:
            return
        with self.statement_cursor() as cur, cur.connection.transaction():
            cur.execute(_PG_RUNS, {"runs": runs})
            threads = sorted({row["thread_id"] for row in cur.fetchall()})
            for statement in _PG_ORPHANS:
                cur.execute(statement, {"threads": threads})


class PrunableAsyncPostgresSaver(HookedAsyncPostgresSaver):
    """LangGraph's asynchronous PostgreSQL saver, with the server's retention hooks."""

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        threads = checked(thread_ids, strategy)
        if not threads:
            return
        async with self.statement_cursor() as cur, cur.connection.transaction():
            for statement in _PG_PRUNE[strategy]:
                await cur.execute(statement, {"threads": threads})

    async def adelete_for_runs(self, run_ids: Iterable[str]) -> None:
        runs = [str(run_id) for run_id in run_ids]
        if not runs:
            return
        async with self.statement_cursor() as cur, cur.connection.transaction():
            await cur.execute(_PG_RUNS, {"runs": runs})
            threads = sorted({row["thread_id"] for row in await cur.fetchall()})
            for statement in _PG_ORPHANS:
                await cur.execute(statement, {"threads": threads})


# SQLite: `:threads` and `:runs` are JSON arrays of ids; the values sit in the rows (no blobs).

_IN_THREADS = "thread_id IN (SELECT value FROM json_each(:threads))"
_NOT_LATEST = f"""{_IN_THREADS} AND (thread_id, checkpoint_ns, checkpoint_id) NOT IN (
  SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM checkpoints
  WHERE {_IN_THREADS} GROUP BY thread_id, checkpoint_ns)"""
_SQLITE_PRUNE = {
    "keep_latest": (
        f"DELETE FROM checkpoints WHERE {_NOT_LATEST}",
        f"""DELETE FROM writes WHERE {_IN_THREADS} AND NOT EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.thread_id = writes.thread_id
  AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)""",
        f"""UPDATE checkpoints SET parent_checkpoint_id = NULL
WHERE {_IN_THREADS} AND parent_checkpoint_id IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM checkpoints p WHERE p.thread_id = checkpoints.thread_id
  AND p.checkpoint_ns = checkpoints.checkpoint_ns
  AND p.checkpoint_id = checkpoints.parent_checkpoint_id)""",
    ),
    "delete": (
        f"DELETE FROM checkpoints WHERE {_IN_THREADS}",
        f"DELETE FROM writes WHERE {_IN_THREADS}",
    ),
}


def _of_runs(table: str) -> str:
    return (
        f"json_extract(CAST({table}.metadata AS TEXT), '$.run_id')"
        " IN (SELECT value FROM json_each(:runs))"
    )


_SQLITE_RUNS = (
    f"""DELETE FROM writes WHERE EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.thread_id = writes.thread_id
  AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id
  AND {_of_runs("c")})""",
    f"""UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE parent_checkpoint_id IN (
  SELECT p.checkpoint_id FROM checkpoints p WHERE p.thread_id = checkpoints.thread_id
  AND p.checkpoint_ns = checkpoints.checkpoint_ns AND {_of_runs("p")})""",
    f"DELETE FROM checkpoints WHERE {_of_runs('checkpoints')}",
)
"""The runs' checkpoints' writes and the links to them first, while the rows say which they are."""


def _ids(ids: Iterable[str]) -> str:
    return json.dumps([str(one) for one in ids])


class PrunableSqliteSaver(HookedSqliteSaver):
    """LangGraph's SQLite saver, with Warrant's retention (the command line's). Each call is one
    transaction, which takes the write lock when it begins."""

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        threads = checked(thread_ids, strategy)
        if threads:
            self._in_transaction(_SQLITE_PRUNE[strategy], {"threads": _ids(threads)})

    def delete_for_runs(self, run_ids: Iterable[str]) -> None:
        runs = _ids(run_ids)
        if runs != "[]":
            self._in_transaction(_SQLITE_RUNS, {"runs": runs})

    def _in_transaction(self, statements: Sequence[str], ids: dict[str, str]) -> None:
        self.setup()
        with self.lock, self.conn:  # commits, or rolls back on an error
            self.conn.execute("BEGIN IMMEDIATE")
            for statement in statements:
                self.conn.execute(statement, ids)


class PrunableAsyncSqliteSaver(AsyncSqliteSaver):
    """LangGraph's asynchronous SQLite saver, with the server's retention hooks (`langgraph dev`
    on the command line's store)."""

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        threads = checked(thread_ids, strategy)
        if threads:
            await self._in_transaction(_SQLITE_PRUNE[strategy], {"threads": _ids(threads)})

    async def adelete_for_runs(self, run_ids: Iterable[str]) -> None:
        runs = _ids(run_ids)
        if runs != "[]":
            await self._in_transaction(_SQLITE_RUNS, {"runs": runs})

    async def _in_transaction(self, statements: Sequence[str], ids: dict[str, str]) -> None:
        await self.setup()
        async with self.lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in statements:
                    await self.conn.execute(statement, ids)
            except BaseException:
                await self.conn.rollback()
                raise
            await self.conn.commit()
