"""The receipts this process committed, so the guard's per-proposal question (has this call id,
this call, a receipt?) is answered without a store read when the ledger is the one it followed."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from guards.checks import call_signature
from ledger.store import CALLS, CURSOR, SIGNATURES, cursor_of

# What this process committed: the guard asks at every proposal whether a call id or a call has
# a receipt, a store read each time. A process that committed a run's whole ledger from its first
# event knows the answer: the receipts committed up to a ledger head are those of the commits that
# led to it, and the head (a chained sha256 of every event, each sealed for the run) names the
# ledger. So the answer is taken from memory only when the cursor asked about has the head this
# process's last commit of the run left; a run resumed in another process, a state put back, a
# commit that failed after it was counted here: a different head, and the store is read.


@dataclass
class KnownReceipts:
    """The receipt index (`calls`: call id → signature; `signatures`: signature → signature) of
    a run's ledger up to `head`, as this process committed it."""

    head: str | None
    index: dict[str, dict[str, str]] = field(default_factory=lambda: {CALLS: {}, SIGNATURES: {}})


_KNOWN: OrderedDict[str, KnownReceipts] = OrderedDict()
_KNOWN_RUNS = 256
_KNOWN_LOCK = threading.Lock()


def known_at(scope: str, cursor: Mapping[str, Any]) -> KnownReceipts | None:
    counted = cursor_of({CURSOR: cursor})
    with _KNOWN_LOCK:
        known = _KNOWN.get(scope)
        if known is None or counted["events"] == 0 or known.head != counted["head"]:
            return None
        _KNOWN.move_to_end(scope)
        return known


def known_after(scope: str, cursor: Mapping[str, Any]) -> KnownReceipts | None:
    """The index a commit after `cursor` extends: a new ledger starts one; one this process
    did not follow is forgotten."""
    counted = cursor_of({CURSOR: cursor})
    if not any(counted[count] for count in ("events", "observations", "answers")):
        return KnownReceipts(head=None)
    known = known_at(scope, counted)
    if known is None:
        with _KNOWN_LOCK:
            _KNOWN.pop(scope, None)
    return known


def learn(
    scope: str,
    known: KnownReceipts,
    receipts: Iterable[Mapping[str, Any]],
    after: Mapping[str, Any],
) -> None:
    """`known` extended by a commit's receipts, at the head the commit left (a new object: a
    reader holding the one before keeps its answer)."""
    index = {kind: dict(entries) for kind, entries in known.index.items()}
    for item in receipts:
        if item.get("kind", "observation") == "observation":
            signature = call_signature(item["tool"], item["args"])
            index[CALLS][item["call_id"]] = signature
            index[SIGNATURES][signature] = signature
    with _KNOWN_LOCK:
        _KNOWN[scope] = KnownReceipts(head=after["head"], index=index)
        _KNOWN.move_to_end(scope)
        if len(_KNOWN) > _KNOWN_RUNS:
            _KNOWN.popitem(last=False)
