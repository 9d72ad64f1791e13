"""The ledger as a chain: each event carries the digest of the one before it.

The chain makes the order of the ledger evident (an event removed, inserted or moved breaks it);
each event's seal (`ledger.integrity`) makes its author evident; the digest of the last event is
held in the run's state (its `cursor`), so an event cut from the end shows too. `chain_break`
checks the chain, as `warrant events THREAD --verify` does.
"""

from __future__ import annotations

from typing import Any

from contract.codes import EventKind
from ledger.bodies import receipt_digest
from ledger.commit import event_digest
from ledger.integrity import channel_is_sealed
from ledger.read import sealed_or_not
from ledger.store import EVENTS, EVIDENCE

__all__ = ["chain_break", "event_digest"]


def chain_break(ledger: list[dict[str, Any]], head: str | None = None) -> str | None:
    """Where the chain breaks, in one line, or None: numbers from 1 without a gap, each event
    naming the digest of the one before it, the last one's digest `head` (when given)."""
    previous: str | None = None
    for position, event in enumerate(ledger, 1):
        if event.get("seq") != position:
            return f"event {position} is numbered {event.get('seq')!r}"
        if event.get("prev") != previous:
            return f"event {position} does not follow event {position - 1} (its digest differs)"
        previous = event_digest(event)
    if head is not None and previous != head:
        return f"event {len(ledger)} is not the event the run's state recorded last (its digest differs)"
    return None


def ledger_break(thread_id: str, values: dict[str, Any]) -> str | None:
    """Where a run's ledger breaks: its chain, its length and last digest against the run's own
    cursor, an event or a receipt it did not write, a receipt other than its `executed` event
    recorded."""
    ledger = values.get("events", [])
    cursor = values.get("cursor") or {}
    if ledger and not channel_is_sealed(values, thread_id, "cursor"):
        return "the run's cursor (its count of events and the last one's digest) was not written by this run"
    if broken := chain_break(ledger, cursor.get("head")):
        return broken
    if len(ledger) != cursor.get("events", 0):
        return f"the store holds {len(ledger)} of the {cursor.get('events', 0)} events the run committed"
    if foreign := sealed_or_not(ledger, thread_id, EVENTS)[1]:
        return (
            f"event {foreign[0].get('seq')} was not written by this run (its seal does not match)"
        )
    receipts = {item.get("ref"): item for item in values.get("evidence", [])}
    if foreign := sealed_or_not(list(receipts.values()), thread_id, EVIDENCE)[1]:
        return (
            f"receipt {foreign[0].get('ref')} was not written by this run (its seal does not match)"
        )
    for event in ledger:
        recorded = event["payload"].get("receipt") if event["type"] == EventKind.EXECUTED else None
        item = receipts.get(event["payload"].get("ref"))
        if recorded and (item is None or receipt_digest(item) != recorded):
            return f"receipt {event['payload'].get('ref')} is not the one event {event['seq']} recorded"
    return None
