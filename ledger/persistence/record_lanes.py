"""The lanes of a run's record in the store, for retention: its own and each child's at any depth.

A child's record lives under a label hashed from the thread and the child's lane
(`ledger.store.lane`), so no namespace prefix finds it, and a prefix of the thread's own label
would not be safe either way. Each lane is found from what the lane that delegated it recorded:
its `delegated` events (written before the child starts, so a child still running or waiting is
found) and the handoffs it received. Every lane found is the run's own thread with a lane after it
(`child_scope`), so no other thread's lane can match, whatever a thread id starts with.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langgraph.store.base import BaseStore, Item

from contract.codes import EventKind
from ledger.integrity import child_scope
from ledger.store import EVENTS, HANDOFFS, space

_PAGE = 500


def all_items(
    store: BaseStore, prefix: tuple[str, ...], where: Mapping[str, Any] | None = None
) -> Iterator[Item]:
    """Every item under `prefix` (those whose values match `where`, filtered by the store)."""
    offset = 0
    while page := store.search(prefix, filter=dict(where or {}), limit=_PAGE, offset=offset):
        yield from page
        offset += len(page)


def lane_prefix(scope: str) -> tuple[str, ...]:
    """The namespace every kind of one lane's record is under."""
    return space(scope, EVENTS)[:-1]


def record_scopes(store: BaseStore, thread: str) -> list[str]:
    """The scopes of a run's record: the thread's, then each child's, breadth first."""
    scopes = [thread]
    for scope in scopes:  # grows while read: each lane's children after it
        for name in sorted(delegated_lanes(store, scope)):
            child = child_scope(thread, name)
            if child not in scopes:
                scopes.append(child)
    return scopes


def delegated_lanes(store: BaseStore, scope: str) -> set[str]:
    """The lanes of the children one lane delegated (`t1`, or `t1/t2` under `t1`), from its
    `delegated` events and received handoffs; whatever in them is not a task id is skipped."""
    parent = scope.partition("\x00")[2]
    found = {document.value.get("lane") for document in all_items(store, space(scope, HANDOFFS))}
    delegated = {"type": EventKind.DELEGATED.value}
    for item in all_items(store, space(scope, EVENTS), delegated):
        task = (item.value.get("payload") or {}).get("task") or {}
        task_id = task.get("id") if isinstance(task, Mapping) else None
        if isinstance(task_id, str) and task_id:
            found.add(f"{parent}/{task_id}" if parent else task_id)
    return {name for name in found if isinstance(name, str) and name}
