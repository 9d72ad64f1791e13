"""Committing: the events, receipts, recalled notes, model calls and handoffs of one step, sealed
for the run and written after its cursor in one store batch; events numbered and chained here.

Parallel tasks (one `execute` per call, one `human` per interaction) cannot number the ledger:
they leave `arrivals` in the state, and the next node commits them in a fixed order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from contract.codes import OBSERVATION
from guards.checks import call_signature
from guards.provenance import read_locally
from guards.seal import SEAL, canonical, sealed_item
from ledger.bodies import body_digest
from ledger.integrity import item_intact, label
from ledger.known import known_after, learn
from ledger.store import (
    ARRIVALS,
    BODIES,
    CALLS,
    CURSOR,
    EMPTY_CURSOR,
    EVENTS,
    EVIDENCE,
    HANDOFFS,
    MODEL_CALLS,
    RECALLED,
    SIGNATURES,
    cursor_of,
    position,
    space,
    text_key,
)

Received = Callable[
    [Sequence[Mapping[str, Any]], Mapping[str, Any]],
    tuple[list[dict[str, Any]], list[dict[str, Any]]],
]
"""Children's handoffs and the cursor → the receipts to commit in the run's own lane and the
handoff documents to keep (`nodes.handoff.received`, handed in by the governed wrapper)."""


def commit(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], written: Mapping[str, list[Any]]
) -> dict[str, Any]:
    """Write `written` (`events`, `evidence`, `recalled`, `model_calls`, `handoffs` of one step,
    in order) after the cursor in one batch, and return the cursor past them. Every item is sealed for this run;
    events are numbered and chained here."""
    after = {**EMPTY_CURSOR, **cursor}
    ops: list[PutOp] = []
    for item in written.get(EVIDENCE, ()):
        ops += _receipt_ops(scope, item)
        count = "observations" if item["ref"].startswith(OBSERVATION) else "answers"
        after[count] = max(after[count], int(item["ref"][1:]))
    for item in written.get(RECALLED, ()):
        after["notes"] = max(after["notes"], int(item["ref"][1:]))
        ops.append(
            PutOp(
                space(scope, RECALLED),
                item["ref"],
                sealed_item(label(scope, RECALLED), item),
                index=False,
            )
        )
    for call in written.get(MODEL_CALLS, ()):
        after["model_calls"] += 1
        sealed = sealed_item(label(scope, MODEL_CALLS), call)
        ops.append(
            PutOp(space(scope, MODEL_CALLS), position(after["model_calls"]), sealed, index=False)
        )
    for document in written.get(HANDOFFS, ()):
        after["handoffs"] += 1
        for spent in ("steps", "questions", "model_calls"):
            after[f"child_{'turns' if spent == 'steps' else spent}"] += document["spent"][spent]
        sealed = sealed_item(label(scope, HANDOFFS), document)
        ops.append(PutOp(space(scope, HANDOFFS), position(after["handoffs"]), sealed, index=False))
    known = known_after(scope, cursor)
    for event in written.get(EVENTS, ()):
        numbered = {
            **sealed_item(label(scope, EVENTS), event),
            "seq": after["events"] + 1,
            "prev": after["head"],
        }
        after["events"] += 1
        after["head"] = event_digest(numbered)
        after["turn"] = max(after["turn"], event.get("turn", 0))
        ops.append(PutOp(space(scope, EVENTS), position(after["events"]), numbered, index=False))
    after["local_read"] = read_locally(
        after["local_read"], written.get(EVIDENCE, ()), written.get(RECALLED, ())
    )
    if ops:
        store.batch(ops)
    if known is not None:
        learn(scope, known, written.get(EVIDENCE, ()), after)
    return after


def _receipt_ops(scope: str, item: dict[str, Any]) -> list[PutOp]:
    lines = item.get("excerpt")
    stored = {key: value for key, value in item.items() if key != "excerpt"}
    sealed = sealed_item(label(scope, EVIDENCE), stored)
    ops = [PutOp(space(scope, EVIDENCE), item["ref"], sealed, index=False)]
    if lines and stored.get("body") == body_digest(lines):
        ops.append(PutOp(BODIES, stored["body"], {"body": lines}, index=False))
    if item.get("kind", "observation") == "observation":
        signature = call_signature(item["tool"], item["args"])
        index = {"ref": item["ref"], "signature": signature}
        ops.append(
            PutOp(
                space(scope, CALLS),
                text_key(item["call_id"]),
                sealed_item(label(scope, CALLS), index),
                index=False,
            )
        )
        ops.append(
            PutOp(
                space(scope, SIGNATURES),
                text_key(signature),
                sealed_item(label(scope, SIGNATURES), index),
                index=False,
            )
        )
    return ops


def event_digest(event: Mapping[str, Any]) -> str:
    """The sha256 of an event as stored (its seq, seal and the digest before it included)."""
    return hashlib.sha256(canonical(dict(event))).hexdigest()


def arrivals_in_order(arrivals: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """What parallel tasks left, in the order the ledger records it: receipts by ref, and the
    events of the tasks in the order the tasks were given."""
    receipts = sorted(
        (item["evidence"] for item in arrivals if "evidence" in item),
        key=lambda item: int(item["ref"][1:]),
    )
    order = {item["ref"]: index for index, item in enumerate(receipts)}
    events = [item["event"] for item in arrivals if "event" in item]
    events.sort(
        key=lambda event: (
            order.get(event["payload"].get("ref"), -1),
            event["payload"].get("order", -1),
        )
    )
    handoffs = [item["handoff"] for item in arrivals if "handoff" in item]
    return {EVIDENCE: receipts, EVENTS: events, HANDOFFS: handoffs}


# The nodes' side: what a step writes goes to the store, and the state keeps the cursor.

RECORDED = (EVENTS, EVIDENCE, MODEL_CALLS, HANDOFFS, RECALLED)
"""What a node's update may carry that is committed to the store, not kept in the state."""


def committed(
    update: dict[str, Any],
    state: Mapping[str, Any],
    store: BaseStore,
    scope: str,
    write: bool = True,
) -> dict[str, Any]:
    """The update with its events, receipts and model calls committed after the state's cursor,
    and the cursor past them. `write=False`: the cursor is not the run's own, so nothing is
    written where it points (the update's refusals still record what was found)."""
    written = {kind: update[kind] for kind in RECORDED if update.get(kind)}
    rest = {name: value for name, value in update.items() if name not in RECORDED}
    if not written or not write:
        return rest
    return {**rest, CURSOR: commit(store, scope, cursor_of(state), written)}


def commit_arrivals(
    state: dict[str, Any],
    store: BaseStore,
    scope: str,
    received: Received,
    skip: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state with the last step's arrivals committed (only those this run sealed; none when
    they were found out of step), and the update that clears them. The state as the governed
    wrapper (`graph.governed`) has it, before any of its values is trusted: a plain dict.
    `received` renumbers children's receipts after the run's own."""
    arrivals = state.get(ARRIVALS)
    if not arrivals:
        return state, {}
    if skip:  # left for the handover to find
        return state, {}
    own = [item for item in arrivals if item_intact(label(scope, ARRIVALS), item)]
    written = arrivals_in_order([{k: v for k, v in item.items() if k != SEAL} for item in own])
    if written[HANDOFFS]:  # children's receipts, numbered after the run's own
        receipts, written[HANDOFFS] = received(written[HANDOFFS], cursor_of(state))
        written[EVIDENCE] = [*written[EVIDENCE], *receipts]
    cursor = commit(store, scope, cursor_of(state), written)
    update = {ARRIVALS: None, CURSOR: cursor}
    return {**state, ARRIVALS: [], CURSOR: cursor}, update


def as_arrivals(update: dict[str, Any]) -> dict[str, Any]:
    """A task's update, its receipts and events left for the next node to commit."""
    arrivals = [{"evidence": item} for item in update.get(EVIDENCE, ())]
    arrivals += [{"event": event} for event in update.get(EVENTS, ())]
    arrivals += [{"handoff": handoff} for handoff in update.get(HANDOFFS, ())]
    rest = {name: value for name, value in update.items() if name not in RECORDED}
    return {**rest, ARRIVALS: arrivals} if arrivals else rest
