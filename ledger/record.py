"""One run's record as one typed face: the store and the run's scope (its thread, or a child's
lane), so a module outside the ledger reads and writes a run's items without spelling its
namespaces (`ledger.store.space`) or the store's batch calls.

The ledger's own kinds (events, receipts, model calls, handoffs, recalled notes) are read up to
a cursor and committed after it (`ledger.read`, `ledger.commit`), each in one store batch as
before; the run's other kinds (people's replies, control, revisions, artifacts, shares) are keyed
items: `value`, `values` (one batch), `listed`, `put`, and `put_op` with `write` to join a run's
writes and others in one batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchItem

from ledger import commit as writing
from ledger import intents
from ledger import read as reading
from ledger.commit import Received
from ledger.read import ShownNotes
from ledger.store import got, space


@dataclass(frozen=True)
class RunRecord:
    """A run's items in `store`, under `scope`'s namespaces."""

    store: BaseStore
    scope: str

    def space(self, kind: str) -> tuple[str, ...]:
        return space(self.scope, kind)

    # The ledger, up to the committed cursor.

    def events(self, cursor: Mapping[str, Any], first: int = 1) -> list[dict[str, Any]]:
        return reading.events(self.store, self.scope, cursor, first)

    def new_events(self, before: int, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
        return reading.new_events(self.store, self.scope, before, cursor)

    def event_at(self, number: int) -> dict[str, Any] | None:
        return reading.event_at(self.store, self.scope, number)

    def evidence(self, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
        return reading.evidence(self.store, self.scope, cursor)

    def recalled(self, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
        return reading.recalled(self.store, self.scope, cursor)

    def handoffs(self, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
        return reading.handoffs(self.store, self.scope, cursor)

    def model_calls(
        self, cursor: Mapping[str, Any], last: int | None = None
    ) -> list[dict[str, Any]]:
        return reading.model_calls(self.store, self.scope, cursor, last)

    def receipts_of_calls(self, cursor: Mapping[str, Any], call_ids: list[str]) -> dict[str, str]:
        return reading.receipts_of_calls(self.store, self.scope, cursor, call_ids)

    def receipts_asked(
        self, cursor: Mapping[str, Any], call_ids: list[str], signatures: list[str]
    ) -> tuple[dict[str, str], set[str]]:
        return reading.receipts_asked(self.store, self.scope, cursor, call_ids, signatures)

    def sealed_or_not(
        self, items: list[dict[str, Any]], kind: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The items of `kind` this run wrote, and those it did not."""
        return reading.sealed_or_not(items, self.scope, kind)

    def materialized(self, values: Mapping[str, Any], shown_notes: ShownNotes) -> dict[str, Any]:
        return reading.materialized(self.store, self.scope, values, shown_notes)

    # Writing the ledger: one batch a step.

    def commit(self, cursor: Mapping[str, Any], written: Mapping[str, list[Any]]) -> dict[str, Any]:
        return writing.commit(self.store, self.scope, cursor, written)

    def committed(
        self, update: dict[str, Any], state: Mapping[str, Any], write: bool = True
    ) -> dict[str, Any]:
        return writing.committed(update, state, self.store, self.scope, write)

    def commit_arrivals(
        self, state: dict[str, Any], received: Received, skip: bool = False
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return writing.commit_arrivals(state, self.store, self.scope, received, skip)

    def intend(self, call_id: str, at: float) -> int:
        """A call's intent recorded before its tool runs; its attempt (`ledger.intents`)."""
        return intents.intend(self.store, self.scope, call_id, at)

    # The run's keyed items (replies, control, revisions, artifacts, shares).

    def value(self, kind: str, key: str) -> Any | None:
        """The value under `key` of the run's `kind`, or None."""
        found = self.store.get(self.space(kind), key)
        return None if found is None else found.value

    def values(self, reads: Sequence[tuple[str, str]]) -> list[Any | None]:
        """The values of `(kind, key)` pairs, in one batch (None where none is)."""
        found = got(self.store, [GetOp(self.space(kind), key) for kind, key in reads])
        return [None if item is None else item.value for item in found]

    def listed(self, kind: str, limit: int = 100) -> list[SearchItem]:
        """The run's items of `kind` (keys and values), up to `limit`."""
        return self.store.search(self.space(kind), limit=limit)

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        self.store.put(self.space(kind), key, value, index=False)

    def put_op(self, kind: str, key: str, value: dict[str, Any] | None) -> PutOp:
        """A write of the run's `kind` for `write` (None deletes)."""
        return PutOp(self.space(kind), key, value, index=False)

    def write(self, ops: Sequence[PutOp]) -> None:
        """`ops` (the run's, and any others that go with them) in one batch."""
        self.store.batch(ops)

    # The same from the server's event loop (its store is asynchronous).

    async def avalue(self, kind: str, key: str) -> Any | None:
        found = await self.store.aget(self.space(kind), key)
        return None if found is None else found.value

    async def avalues(self, reads: Sequence[tuple[str, str]]) -> list[Any | None]:
        found = await self.store.abatch([GetOp(self.space(kind), key) for kind, key in reads])
        return [item.value if isinstance(item, Item) else None for item in found]

    async def awrite(self, ops: Sequence[PutOp]) -> None:
        await self.store.abatch(ops)
