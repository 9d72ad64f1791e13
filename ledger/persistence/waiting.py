"""A step's record handed over to the checkpoint's round trip, kept by thread until it is sent.

A step hands its store writes over (`ledger.staged.StagedWrites.flush` → `defer`) instead of
writing them in a round trip of their own; the saver's next pipelined write for the same thread
(the task's writes, or the checkpoint) sends them first (`ledger.persistence.lease` on the
embedded PostgreSQL lease, `ledger.persistence.pg_saver` on the server). Until that write has
committed, the store reads them back from here (a read on another connection would not see them
yet); `WaitingStore` is that store on an embedded lease, the backends' differences its overrides.
Whatever is never sent (the step's checkpoint never written: a crash, a
cancelled run) is as if the step had not run: readers stop at the committed cursor, and the step
runs again and writes the same keys.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar

from langgraph.store.base import BaseStore, GetOp, Op, PutOp, Result

from ledger.staged import as_item

Key = tuple[tuple[str, ...], str]

MAX_THREADS = 4096
"""Threads whose record may wait at once in one process; past it the oldest is dropped (as if its
step had not run: a run that moved to another server replica never sends what it left here)."""


class WaitingWrites:
    def __init__(self) -> None:
        self._by_thread: OrderedDict[str, dict[Key, PutOp]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, thread: str, puts: Sequence[PutOp]) -> None:
        with self._lock:
            waiting = self._by_thread.setdefault(thread, {})
            self._by_thread.move_to_end(thread)
            for put in puts:
                waiting[(put.namespace, put.key)] = put
            if len(self._by_thread) > MAX_THREADS:
                self._by_thread.popitem(last=False)

    def pending(self, thread: str) -> list[PutOp]:
        """What waits for `thread`; it goes on waiting (and being read back) until `sent`."""
        with self._lock:
            return list(self._by_thread.get(thread, {}).values())

    def all_pending(self) -> dict[str, list[PutOp]]:
        """What waits, by thread (still waiting until `sent`)."""
        with self._lock:
            return {thread: list(waiting.values()) for thread, waiting in self._by_thread.items()}

    def sent(self, thread: str, puts: Sequence[PutOp]) -> None:
        """`puts` are committed: no longer waiting, unless a later put of the same key is."""
        with self._lock:
            waiting = self._by_thread.get(thread)
            if waiting is None:
                return
            for put in puts:
                if waiting.get((put.namespace, put.key)) is put:
                    del waiting[(put.namespace, put.key)]
            if not waiting:
                del self._by_thread[thread]

    def found(self, keys: Sequence[Key]) -> dict[Key, PutOp]:
        """The waiting puts of `keys` (the latest of any thread)."""
        with self._lock:
            return {
                key: waiting[key]
                for waiting in self._by_thread.values()
                for key in keys
                if key in waiting
            }

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._by_thread)


def batch_through(
    ops: Iterable[Op],
    waiting: WaitingWrites,
    clock: Callable[[], float],
    flush: Callable[[], None],
    store_batch: Callable[[list[Op]], list[Result]],
) -> list[Result]:
    """A hand-over store's `batch`: a `GetOp` of a key that waits answered from the hand-over (as
    the item it will be, stamped by `clock`); a search, a listing or a write first sends what
    waits (`flush`: it goes after it, it sees it); the rest from the store, in one batch."""
    ops = list(ops)
    found = waiting.found([(op.namespace, op.key) for op in ops if isinstance(op, GetOp)])
    results: list[Result] = [None] * len(ops)
    passed: list[tuple[int, Op]] = []
    for index, op in enumerate(ops):
        if isinstance(op, GetOp) and (op.namespace, op.key) in found:
            results[index] = as_item(found[(op.namespace, op.key)], clock())
        else:
            passed.append((index, op))
    if not passed:
        return results
    if waiting and not all(isinstance(op, GetOp) for _, op in passed):
        flush()
    for (index, _), result in zip(passed, store_batch([op for _, op in passed]), strict=True):
        results[index] = result
    return results


StoreT = TypeVar("StoreT", bound=BaseStore)
CursorT = TypeVar("CursorT")


class WaitingStore(BaseStore, Generic[StoreT, CursorT]):
    """A leased run's store (one run a lease, so no scope is needed to find its writes): a step's
    record handed over (`defer`) for the saver's next write, read back from here until then, the
    rest from LangGraph's `store`. A backend says how a round trip of its own is opened
    (`_round_trip`), how the waiting puts go on its cursor (`_send`) and how a call's intent is
    counted (`count_attempt`): PostgreSQL's lease (`ledger.persistence.lease`), SQLite's
    (`ledger.persistence.sqlite_lease`)."""

    def __init__(self, store: StoreT, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self._waiting = WaitingWrites()
        self._clock = clock  # stamps an item read back before it is sent

    def defer(self, puts: Sequence[PutOp], scope: str = "") -> None:
        """Keep `puts` for the saver's next write (read back here until then)."""
        self._waiting.add("", puts)

    def send_waiting(self, cur: CursorT) -> list[PutOp]:
        """Put what waits on `cur` (the saver's, in its pipeline or transaction); the puts, to be
        marked `sent` once that has committed."""
        puts = self._waiting.pending("")
        if puts:
            self._send(puts, cur)
        return puts

    def sent(self, puts: list[PutOp]) -> None:
        self._waiting.sent("", puts)

    def flush(self) -> None:
        """Send what waits, now, in a round trip of its own (a search sees it; the lease ends)."""
        with self._round_trip() as cur:
            puts = self.send_waiting(cur)
        self.sent(puts)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return batch_through(ops, self._waiting, self._clock, self.flush, self._store_batch)

    def _store_batch(self, ops: list[Op]) -> list[Result]:
        return self.store.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError("the embedded store is synchronous")

    def _round_trip(self) -> AbstractContextManager[CursorT]:
        raise NotImplementedError

    def _send(self, puts: list[PutOp], cur: CursorT) -> None:
        raise NotImplementedError

    def count_attempt(self, namespace: tuple[str, ...], key: str, mark: dict[str, Any]) -> int:
        """Record a call's intent (`mark` with `attempts: 1` for a first one) and return its
        attempt, one more than the item held, in one statement."""
        raise NotImplementedError
