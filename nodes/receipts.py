"""The run's receipts from its ledger, as the guard asks about them (`guards.receipts.Receipts`).

What one proposal will be asked about (its calls' ids, the signatures of those whose arguments
validate, read from the parse the guard decides) is read in one store batch, at the first
question, so a proposal refused before any call is checked costs no read. Committed receipts
only: a run's record is never listed to decide one proposal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from langgraph.store.base import BaseStore

from guards.checks import ParsedProposal
from ledger.read import executed_signatures, receipts_asked, receipts_of_calls


@dataclass(frozen=True)
class _Read:
    """What one batch read: call id → its receipt's signature (None: no receipt), and signature
    → whether a receipt has it."""

    by_call_id: Mapping[str, str | None]
    signatures: Mapping[str, bool]


@dataclass(frozen=True)
class LedgerReceipts:
    """The run's committed receipts, asked about for one proposal: in one batch for what the
    proposal names; anything else (never asked by the guard's own checks) is read on its own."""

    store: BaseStore
    scope: str
    cursor: Mapping[str, Any]
    proposal: ParsedProposal

    @cached_property
    def _read(self) -> _Read:
        ids, signatures = self.proposal.call_ids(), self.proposal.signatures()
        if not ids:
            return _Read({}, {})
        receipts, seen = receipts_asked(self.store, self.scope, self.cursor, ids, signatures)
        return _Read(
            {call_id: receipts.get(call_id) for call_id in ids},
            {signature: signature in seen for signature in signatures},
        )

    def signature_of(self, call_id: str) -> str | None:
        if call_id in self._read.by_call_id:
            return self._read.by_call_id[call_id]
        return receipts_of_calls(self.store, self.scope, self.cursor, [call_id]).get(call_id)

    def has_signature(self, signature: str) -> bool:
        if signature in self._read.signatures:
            return self._read.signatures[signature]
        return signature in executed_signatures(self.store, self.scope, self.cursor, [signature])
