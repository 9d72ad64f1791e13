"""Run-scoped configuration that is not state: the clocks and the sleep (injectable for tests)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from contract.codes import EventKind
from contract.shapes import Event


@dataclass(frozen=True)
class WarrantContext:
    clock: Callable[[], float] = time.time
    """Seconds since the epoch; the guard's deadline and the ledger's times come from here."""
    choosers: Mapping[str, Any] = field(default_factory=dict)
    """Extra choosers for embedded use, by spec name (trusted application code, not a sandbox)."""
    sleep: Callable[[float], None] = time.sleep
    """How the run waits out time (a retry's backoff, the rest of its deadline): with a fake
    `clock`, a test passes a `sleep` that moves it, so no test waits for time to pass."""
    monotonic: Callable[[], float] = time.monotonic
    """Seconds on a clock that never goes back, for how long something took: a model stream's
    whole-response timeout (`nodes.choosers.transport`)."""
    entry: Mapping[str, str] | None = None
    """Entry's decision that started this run (`warrant ask`: question, route, reason, by),
    recorded in its `admitted` event. In-process only: the server has no Entry, and no caller's
    input can claim one."""


def context_of(runtime: Runtime[WarrantContext] | None) -> WarrantContext:
    context = getattr(runtime, "context", None)
    return context if isinstance(context, WarrantContext) else WarrantContext()


def now(runtime: Runtime[WarrantContext] | None) -> float:
    return context_of(runtime).clock()


def store_of(runtime: Runtime[WarrantContext]) -> BaseStore:
    """The store a node's runtime holds: the governed wrapper (`graph.governed`) always gives one
    (the step's staged writes); none is a wiring mistake, not a run's failure."""
    if runtime.store is None:
        raise RuntimeError("a Warrant node runs with a store (graph.build.compile_graph binds one)")
    return runtime.store


def event(kind: EventKind, turn: int, actor: str, at: float, **payload: Any) -> Event:
    """One ledger entry; the state's reducer assigns its sequence number."""
    stamp = datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")
    return {"type": kind.value, "time": stamp, "turn": turn, "actor": actor, "payload": payload}
