"""Retention: delete old runs and prune checkpoints, so the tables do not grow without bound;
a deleted run's record goes with it, and the content-addressed items no remaining run refers to
(bodies, a glob family's members) are removed, in one sweep.

The checkpoints are pruned by the savers' own `prune` (`ledger.persistence.pruning`), the policy the
LangGraph server's hooks apply too: checkpoints only, never a run's record."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg import Connection
from psycopg_pool import ConnectionPool

from ledger.members import FAMILIES, stored_digests
from ledger.persistence.pruning import PrunablePostgresSaver, PrunableSqliteSaver
from ledger.persistence.record_lanes import all_items, lane_prefix, record_scopes
from ledger.persistence.savers import Storage
from ledger.store import BODIES, EVIDENCE, MODEL_CALLS, space

Namespace = tuple[str, ...]
SWEPT: tuple[Namespace, ...] = (BODIES, FAMILIES)
"""The store's content-addressed namespaces: an item stays while a kept run refers to it."""


@dataclass(frozen=True)
class PruneReport:
    deleted: list[str] = field(default_factory=list)
    """Threads deleted because their last checkpoint was older than the limit."""
    pruned: list[str] = field(default_factory=list)
    """Threads reduced to their latest checkpoint."""
    bodies: int = 0
    """Stored bodies (excerpts, model requests) removed because no remaining run refers to them."""
    families: int = 0
    """Glob families' members items removed because no remaining run's grant names them."""


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
    removed = drop_unreferenced(storage, kept)
    return PruneReport(old, rest, bodies=removed[BODIES], families=removed[FAMILIES])


PRUNABLE = (PrunableSqliteSaver, PrunablePostgresSaver)
_PAGE = 500


def forget_run(store: BaseStore, thread: str) -> None:
    """Delete every item of a run's record: each of its lanes (`record_lanes`: its own, its
    children's at any depth) under `("warrant", "runs", <lane>)`. The lanes are all found first
    (the run's own lane names its children's); its own goes last."""
    doomed = [
        (item.namespace, item.key)
        for scope in reversed(record_scopes(store, thread))
        for item in all_items(store, lane_prefix(scope))
    ]
    _deleted(store, doomed)


def drop_unreferenced(storage: Storage, threads: list[str]) -> dict[Namespace, int]:
    """Remove the items of each namespace of `SWEPT` that no run of `threads` refers to
    (`referred_by`); how many of each."""
    namespaces = checkpoint_namespaces(storage.saver)
    referred: dict[Namespace, set[str]] = {namespace: set() for namespace in SWEPT}
    for thread in threads:
        for namespace, keys in referred_by(storage, thread, namespaces.get(thread, [])).items():
            referred[namespace] |= keys
    removed = {}
    for namespace in SWEPT:
        unused = [
            key for key in stored_keys(storage.store, namespace) if key not in referred[namespace]
        ]
        _deleted(storage.store, [(namespace, key) for key in unused])
        removed[namespace] = len(unused)
    return removed


def referred_by(
    storage: Storage, thread: str, namespaces: Sequence[str]
) -> dict[Namespace, set[str]]:
    """The bodies a run's receipts, model calls and pending model request refer to, and the
    members items its grant names. The receipts and model calls of every lane of its record (its
    children's own, before they are handed to it: a child waiting for a person); the state read
    at the latest checkpoint of each of the thread's checkpoint `namespaces` (its child lanes'
    too), with the writes pending on it (a node's, saved before the checkpoint that would hold
    them)."""
    saver, store = storage
    bodies: set[str | None] = set()  # None: an item that refers to no body
    families: set[str] = set()
    for scope in record_scopes(store, thread):
        for item in all_items(store, space(scope, EVIDENCE)):
            bodies |= {item.value.get("body"), item.value.get("triage_body")}
        for call in all_items(store, space(scope, MODEL_CALLS)):
            bodies |= {call.value.get("request_body"), call.value.get("response_schema")}
    for values in _latest_values(saver, thread, namespaces):
        request = values.get("request") or {}
        bodies |= {request.get("body"), request.get("schema")}
        families |= stored_digests(values.get("grant"))
    return {BODIES: {body for body in bodies if body is not None}, FAMILIES: families}


def _latest_values(
    saver: BaseCheckpointSaver[str], thread: str, namespaces: Sequence[str]
) -> Iterator[Mapping[str, Any]]:
    for namespace in namespaces:
        config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": namespace}}
        latest = saver.get_tuple(config)
        if latest is None:
            continue
        yield latest.checkpoint["channel_values"]
        for _, channel, value in latest.pending_writes or []:
            yield {channel: value}


def _deleted(store: BaseStore, doomed: Sequence[tuple[Namespace, str]]) -> None:
    for start in range(0, len(doomed), _PAGE):
        store.batch(
            [PutOp(namespace, key, None) for namespace, key in doomed[start : start + _PAGE]]
        )


def stored_keys(store: BaseStore, namespace: Namespace) -> list[str]:
    """The keys of a namespace's items: from a SQL store's table, without their values (a family's
    members item holds a kilobyte a member); else from the items."""
    if isinstance(store, (SqliteStore, PostgresStore)):
        query = "SELECT key FROM store WHERE prefix = ?"
        return [row[0] for row in _rows(store, query, (".".join(namespace),))]
    return [item.key for item in all_items(store, namespace)]


def last_activity(saver: BaseCheckpointSaver[str]) -> dict[str, float]:
    """Each thread id with the time of its latest checkpoint (seconds since the epoch)."""
    activity = {}
    for thread_id in thread_ids(saver):
        latest = saver.get_tuple({"configurable": {"thread_id": thread_id}})
        if latest is not None:
            activity[thread_id] = datetime.fromisoformat(latest.checkpoint["ts"]).timestamp()
    return activity


def thread_ids(saver: BaseCheckpointSaver[str]) -> list[str]:
    if isinstance(saver, (SqliteSaver, PostgresSaver)):
        query = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
        return [row[0] for row in _rows(saver, query)]
    return sorted({item.config["configurable"]["thread_id"] for item in saver.list(None)})


def checkpoint_namespaces(saver: BaseCheckpointSaver[str]) -> dict[str, list[str]]:
    """Each thread's checkpoint namespaces: its own (`""`) and its subgraphs' (child lanes)."""
    if isinstance(saver, (SqliteSaver, PostgresSaver)):
        query = "SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints"
        pairs = {(row[0], row[1]) for row in _rows(saver, query)}
    else:
        configs = [item.config["configurable"] for item in saver.list(None)]
        pairs = {(config["thread_id"], config.get("checkpoint_ns", "")) for config in configs}
    found: dict[str, list[str]] = {}
    for thread, namespace in sorted(pairs):
        found.setdefault(thread, []).append(namespace)
    return found


SqlOwner = SqliteSaver | SqliteStore | PostgresSaver | PostgresStore


def _rows(owner: SqlOwner, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of `query` (`?` placeholders), on a SQL saver's or store's own connection."""
    if isinstance(owner, (SqliteSaver, SqliteStore)):
        with owner.lock:
            return [tuple(row) for row in owner.conn.execute(query, params)]
    with _connection(owner.conn) as conn:
        rows = conn.execute(query.replace("?", "%s"), params).fetchall()
    return [tuple(row.values()) if isinstance(row, Mapping) else tuple(row) for row in rows]


def _connection(conn: Any) -> AbstractContextManager[Connection[Any]]:
    """A connection of a pool, or the connection itself."""
    return conn.connection() if isinstance(conn, ConnectionPool) else nullcontext(conn)


def _delete(saver: BaseCheckpointSaver[str], threads: Sequence[str]) -> None:
    if isinstance(saver, PRUNABLE):
        saver.prune(threads, strategy="delete")
        return
    for thread_id in threads:
        saver.delete_thread(thread_id)


def _keep_latest(saver: BaseCheckpointSaver[str], threads: Sequence[str]) -> None:
    if isinstance(saver, PRUNABLE):  # in memory, a run's history goes with the process
        saver.prune(threads, strategy="keep_latest")
