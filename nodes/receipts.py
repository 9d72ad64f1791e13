"""The run's receipts as the guard asks for them: by call id and by signature, each a store read
of committed receipts only (a run's record is never listed to decide one proposal), what a
proposal will be asked about read in one batch beforehand (`asked_at_once`)."""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.store.base import BaseStore

from guards.checks import ParsedProposal
from ledger.read import executed_signatures, receipts_asked, receipts_of_calls


@dataclass(frozen=True)
class Lookups:
    """The run's receipts as the guard asks for them: by call id and by signature, each a store
    read of committed receipts only (a run's record is never listed to decide one proposal).
    What a proposal will be asked about is read in one batch beforehand (`asked_at_once`)."""

    store: BaseStore
    scope: str
    cursor: dict[str, Any]
    read_ids: Mapping[str, str | None] = field(default_factory=dict)
    """Call id read beforehand → the signature of its receipt, or None for no receipt."""
    read_signatures: Mapping[str, bool] = field(default_factory=dict)
    """Signature read beforehand → whether a receipt has it."""

    def receipts(self) -> Mapping[str, str]:
        return _ByCallId(self)

    def signatures(self) -> Container[str]:
        return _BySignature(self)


@dataclass(frozen=True)
class _ByCallId(Mapping[str, str]):
    lookups: Lookups

    def __getitem__(self, call_id: str) -> str:
        if call_id in self.lookups.read_ids:
            signature = self.lookups.read_ids[call_id]
            if signature is None:
                raise KeyError(call_id)
            return signature
        found = receipts_of_calls(
            self.lookups.store, self.lookups.scope, self.lookups.cursor, [call_id]
        )
        return found[call_id]

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a run's receipts are looked up by call id, never listed")

    def __len__(self) -> int:
        observations: int = self.lookups.cursor["observations"]
        return observations


@dataclass(frozen=True)
class _BySignature(Container[str]):
    lookups: Lookups

    def __contains__(self, signature: object) -> bool:
        if not isinstance(signature, str):
            return False
        if signature in self.lookups.read_signatures:
            return self.lookups.read_signatures[signature]
        found = executed_signatures(
            self.lookups.store, self.lookups.scope, self.lookups.cursor, [signature]
        )
        return signature in found


def asked_at_once(looked_up: Lookups, parsed: ParsedProposal) -> Lookups:
    """The lookups with the receipts the guard will ask about for this proposal read in one
    batch: its calls' ids, and the signatures of those whose arguments validate (read from the
    parse the guard decides, so no call is validated twice; a call refused is never looked up)."""
    ids, signatures = parsed.call_ids(), parsed.signatures()
    if not ids:
        return looked_up
    receipts, seen = receipts_asked(
        looked_up.store, looked_up.scope, looked_up.cursor, ids, signatures
    )
    return replace(
        looked_up,
        read_ids={call_id: receipts.get(call_id) for call_id in ids},
        read_signatures={signature: signature in seen for signature in signatures},
    )
