"""The ledger as a chain: each event carries the digest of the one before it.

The chain makes the order of the ledger evident (an event removed, inserted or moved breaks it);
each event's seal (`nodes.integrity`) makes its author evident. `verify` checks both, as
`warrant events THREAD --verify` does.
"""

from __future__ import annotations

import hashlib
from typing import Any

from guards.seal import canonical


def event_digest(event: dict[str, Any]) -> str:
    """The sha256 of an event as stored (its seq, seal and the digest before it included)."""
    return hashlib.sha256(canonical(event)).hexdigest()


def chain_break(ledger: list[dict[str, Any]]) -> str | None:
    """Where the chain breaks, in one line, or None: numbers from 1 without a gap, each event
    naming the digest of the one before it."""
    previous: str | None = None
    for position, event in enumerate(ledger, 1):
        if event.get("seq") != position:
            return f"event {position} is numbered {event.get('seq')!r}"
        if event.get("prev") != previous:
            return f"event {position} does not follow event {position - 1} (its digest differs)"
        previous = event_digest(event)
    return None
