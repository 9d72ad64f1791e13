"""The ledger as a chain: each event carries the digest of the one before it.

The chain makes the order of the ledger evident (an event removed, inserted or moved breaks it);
each event's seal (`nodes.integrity`) makes its author evident; the digest of the last event is
held in the run's state (its `cursor`), so an event cut from the end shows too. `chain_break`
checks the chain, as `warrant events THREAD --verify` does.
"""

from __future__ import annotations

from typing import Any

from nodes.record import event_digest

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
