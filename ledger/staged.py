"""One store write per step: a node's record is written in one batch when the node is done.

A step commits the last step's arrivals, runs its node, and commits what the node recorded; each
was its own store batch, a round trip each on PostgreSQL. `StagedWrites` keeps the writes of a
step and reads them back to the node (a `GetOp` of a key written in this step sees the write),
and `flush` sends them all in one batch before the step's checkpoint. A crash before the flush
leaves nothing of the step in the store; the step runs again and writes the same keys.

A store that writes the record in the checkpoint's own round trip (`WritesWithCheckpoint`: the
run's lease store on PostgreSQL, `ledger.persistence.lease`) is handed the writes instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result


@runtime_checkable
class WritesWithCheckpoint(Protocol):
    """A store that sends a step's record with the step's checkpoint, reading it back until then."""

    def defer(self, puts: Sequence[PutOp], scope: str) -> None: ...


class StagedWrites(BaseStore):
    """A store whose writes wait for `flush`; reads see them first, then the store beneath.
    `clock` (seconds since the epoch; the run's, `WarrantContext.clock`) stamps a staged item read
    back before the flush; `scope` names the run the writes are handed over for."""

    def __init__(
        self, store: BaseStore, clock: Callable[[], float] = time.time, scope: str = ""
    ) -> None:
        self._store = store
        self._scope = scope
        self._clock = clock
        self._puts: dict[tuple[tuple[str, ...], str], PutOp] = {}

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        passed: list[tuple[int, Op]] = []
        for index, op in enumerate(ops):
            if isinstance(op, PutOp):
                self._puts[(op.namespace, op.key)] = op
            elif isinstance(op, GetOp) and (op.namespace, op.key) in self._puts:
                results[index] = as_item(self._puts[(op.namespace, op.key)], self._clock())
            else:
                passed.append((index, op))
        if passed:
            found = self._store.batch([op for _, op in passed])
            for (index, _), result in zip(passed, found, strict=True):
                results[index] = result
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError("a step's writes are staged by the synchronous graph only")

    def flush(self) -> None:
        """Write everything staged, in one batch (or hand it to the checkpoint's round trip)."""
        if not self._puts:
            return
        puts = list(self._puts.values())
        self._puts.clear()
        if isinstance(self._store, WritesWithCheckpoint):
            self._store.defer(puts, self._scope)
        else:
            self._store.batch(puts)


def as_item(put: PutOp, at: float) -> Item | None:
    """A put read back as the item it writes, stamped `at`."""
    if put.value is None:
        return None
    now = datetime.fromtimestamp(at, UTC)
    value = put.value if isinstance(put.value, dict) else dict(put.value)  # a dict, as put
    return Item(value=value, key=put.key, namespace=put.namespace, created_at=now, updated_at=now)
