"""The run's receipts as the guard asks about them: a call id's signature, a signature's receipt.

The guard never lists a run's receipts; it asks about the calls of one proposal. `Receipts` is
that question, answered by the node that knows where receipts are kept (`nodes.receipts` reads
the run's ledger, in one batch per proposal). `Seen` adds a batch's calls approved before the one
checked, so the identity and repetition checks ask one thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol


class Receipts(Protocol):
    """The run's calls that already have a receipt, asked about one call at a time."""

    def signature_of(self, call_id: str) -> str | None:
        """The signature of the call with this id that has a receipt, or None for none."""
        ...

    def has_signature(self, signature: str) -> bool:
        """Whether a call with this signature has a receipt."""
        ...


@dataclass(frozen=True)
class ListedReceipts:
    """Receipts held in full, call id → signature: a run with none, or a test's."""

    by_call_id: Mapping[str, str] = field(default_factory=dict)

    def signature_of(self, call_id: str) -> str | None:
        return self.by_call_id.get(call_id)

    def has_signature(self, signature: str) -> bool:
        return signature in self.by_call_id.values()


NO_RECEIPTS = ListedReceipts()


@dataclass
class Seen:
    """The run's receipts and the calls of this batch approved before the one checked: a call id
    is asked of the batch first, as the batch's calls are newer. Grows as the batch is checked."""

    receipts: Receipts
    batch: dict[str, str] = field(default_factory=dict)
    """Call id → signature of the batch's calls approved so far."""

    def signature_of(self, call_id: str) -> str | None:
        if call_id in self.batch:
            return self.batch[call_id]
        return self.receipts.signature_of(call_id)

    def has_signature(self, signature: str) -> bool:
        return signature in self.batch.values() or self.receipts.has_signature(signature)

    def add(self, call_id: str, signature: str) -> None:
        self.batch[call_id] = signature
