"""Retention: delete old runs and prune checkpoints, so the tables do not grow without bound;
a deleted run's record goes with it, and bodies no remaining run refers to are removed.

The checkpoints are pruned by the savers' own `prune` (`graph.persistence.pruning`), the policy the
LangGraph server's hooks apply too: checkpoints only, never a run's record."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import BaseStore, Item, PutOp
from psycopg_pool import ConnectionPool

from graph.persistence.pruning import PrunablePostgresSaver, PrunableSqliteSaver
from graph.persistence.savers import Storage
from nodes.record import BODIES, EVENTS, EVIDENCE, MODEL_CALLS, space


@dataclass(frozen=True)
class PruneReport:
    deleted: list[str] = field(default_factory=list)
    """Threads deleted because their last checkpoint was older than the limit."""
    pruned: list[str] = field(default_factory=list)
    """Threads reduced to their latest checkpoint."""
    bodies: int = 0
    """Stored bodies (excerpts, model requests) removed because no remaining run refers to them."""


def prune(
    storage: Storage, *, keep_latest: bool, older_than_days: float | None, now: float
) -> PruneReport:
    saver, store = storage
    threads = last_activity(saver)
    cutoff = now - older_than_days * 86400 if older_than_days is not None else None
    old = [thread for thread, at in threads.items() if cutoff is not None and at < cutoff]
    _delete(saver, old)
    for thread in old:
        forget_run(store, thread)
    rest = [thread for thread in threads if thread not in old] if keep_latest else []
    _keep_latest(saver, rest)
    kept = [thread for thread in threads if thread not in old]
    return PruneReport(deleted=old, pruned=rest, bodies=drop_unreferenced_bodies(storage, kept))


PRUNABLE = (PrunableSqliteSaver, PrunablePostgresSaver)
_PAGE = 500


def _all_items(store: BaseStore, prefix: tuple[str, ...]) -> Iterator[Item]:
    offset = 0
    while page := store.search(prefix, limit=_PAGE, offset=offset):
        yield from page
        offset += len(page)


def forget_run(store: BaseStore, thread: str) -> None:
    """Delete every item of a run's record (its lanes under `("warrant", "runs", <lane>)`)."""
    prefix = space(thread, EVENTS)[:-1]
    doomed = [(item.namespace, item.key) for item in _all_items(store, prefix)]
    for start in range(0, len(doomed), _PAGE):
        store.batch(
            [PutOp(namespace, key, None) for namespace, key in doomed[start : start + _PAGE]]
        )


def drop_unreferenced_bodies(storage: Storage, threads: list[str]) -> int:
    """Remove the bodies that no receipt, model call or pending model request of `threads`
    refers to; returns how many."""
    saver, store = storage
    referred: set[str | None] = set()  # None: an item that refers to no body
    for thread in threads:
        for item in _all_items(store, space(thread, EVIDENCE)):
            referred |= {item.value.get("body"), item.value.get("triage_body")}
        for call in _all_items(store, space(thread, MODEL_CALLS)):
            referred |= {call.value.get("request_body"), call.value.get("response_schema")}
        latest = saver.get_tuple({"configurable": {"thread_id": thread}})
        request = (latest.checkpoint["channel_values"].get("request") if latest else None) or {}
        referred |= {request.get("body"), request.get("schema")}
    unused = [item.key for item in _all_items(store, BODIES) if item.key not in referred]
    for start in range(0, len(unused), _PAGE):
        store.batch([PutOp(BODIES, key, None) for key in unused[start : start + _PAGE]])
    return len(unused)


def last_activity(saver: BaseCheckpointSaver[str]) -> dict[str, float]:
    """Each thread id with the time of its latest checkpoint (seconds since the epoch)."""
    activity = {}
    for thread_id in thread_ids(saver):
        latest = saver.get_tuple({"configurable": {"thread_id": thread_id}})
        if latest is not None:
            activity[thread_id] = datetime.fromisoformat(latest.checkpoint["ts"]).timestamp()
    return activity


def thread_ids(saver: BaseCheckpointSaver[str]) -> list[str]:
    query = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
    if isinstance(saver, SqliteSaver):
        with saver.lock:
            return [row[0] for row in saver.conn.execute(query)]
    if isinstance(saver, PostgresSaver):
        if isinstance(saver.conn, ConnectionPool):
            with saver.conn.connection() as conn:
                return [row["thread_id"] for row in conn.execute(query)]
        return [row["thread_id"] for row in saver.conn.execute(query)]
    return sorted({item.config["configurable"]["thread_id"] for item in saver.list(None)})


def _delete(saver: BaseCheckpointSaver[str], threads: Sequence[str]) -> None:
    if isinstance(saver, PRUNABLE):
        saver.prune(threads, strategy="delete")
        return
    for thread_id in threads:
        saver.delete_thread(thread_id)


def _keep_latest(saver: BaseCheckpointSaver[str], threads: Sequence[str]) -> None:
    if isinstance(saver, PRUNABLE):  # in memory, a run's history goes with the process
        saver.prune(threads, strategy="keep_latest")
