"""Intents: a call that may have run before a crash.

Before a tool runs, the executor records that it is about to (`intend`); the count of attempts
tells a call run again after a crash (its receipt says which attempt it was: an earlier one may
have run, and an uncertain effect stays uncertain).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from langgraph.store.base import BaseStore, GetOp, PutOp

from ledger.store import INTENTS, got, space, text_key


@runtime_checkable
class CountsAttempts(Protocol):
    """A store that records an intent and returns its attempt in one round trip (the run's lease
    store on PostgreSQL, `ledger.persistence.lease`), as `intend` reads and writes it."""

    def count_attempt(self, namespace: tuple[str, ...], key: str, mark: dict[str, Any]) -> int: ...


def intend(store: BaseStore, scope: str, call_id: str, at: float) -> int:
    """Record that a call is about to run; returns which attempt this is (2 and more: an
    earlier attempt was cut by a crash after it may have run). The call's item counts its
    attempts: read, then written with one more before the tool runs. A crash between the two
    leaves the count as it was, and the tool has not run. One item per call under one namespace
    per run (a search would read every namespace of an in-memory store, a cost that grows with
    the run)."""
    key = text_key(call_id)
    if isinstance(store, CountsAttempts):
        return store.count_attempt(space(scope, INTENTS), key, {"call_id": call_id, "at": at})
    found = got(store, [GetOp(space(scope, INTENTS), key)])[0]
    attempt = _attempts_before(found.value) + 1 if found else 1
    mark = {"call_id": call_id, "attempts": attempt, "at": at}
    store.batch([PutOp(space(scope, INTENTS), key, mark, index=False)])
    return attempt


def _attempts_before(mark: dict[str, Any]) -> int:
    """The count an item holds; an item without a plausible count says at least one attempt
    started (an uncertain effect stays uncertain)."""
    count = mark.get("attempts")
    return count if type(count) is int and count >= 1 else 1
