"""Reading a run's record back: never past the committed cursor, each kind in one store batch."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langgraph.store.base import BaseStore, GetOp

from contract.codes import ANSWER, OBSERVATION, RECOLLECTION
from guards.seal import SEAL
from ledger.bodies import BODY_FIELDS, bodies, with_excerpt
from ledger.integrity import item_intact, label
from ledger.known import known_at
from ledger.members import with_members
from ledger.store import (
    CALLS,
    CURSOR,
    EVENT_FIELDS_ADDED,
    EVENTS,
    EVIDENCE,
    HANDOFFS,
    MODEL_CALLS,
    RECALLED,
    SIGNATURES,
    RecordMissing,
    cursor_of,
    got,
    position,
    space,
    text_key,
    values_at,
)

ShownNotes = Callable[[BaseStore, list[dict[str, Any]]], list[dict[str, Any]]]
"""Recalled notes (ids, versions, digests) → as they may be shown now (`nodes.memory.shown_notes`,
handed in by the reader)."""


def events(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], first: int = 1
) -> list[dict[str, Any]]:
    """The ledger from event `first` to the cursor, as stored (a missing event raises)."""
    count = cursor_of({CURSOR: cursor})["events"]
    found = values_at(store, scope, EVENTS, [position(n) for n in range(first, count + 1)])
    if any(event is None for event in found):
        raise RecordMissing(f"the store lacks events of run {scope!r} that its state records")
    return found


def event_at(store: BaseStore, scope: str, number: int) -> dict[str, Any] | None:
    return values_at(store, scope, EVENTS, [position(number)])[0] if number > 0 else None


def evidence(store: BaseStore, scope: str, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every committed receipt (E refs, then H refs), its excerpt read back from its body."""
    counted = cursor_of({CURSOR: cursor})
    refs = [f"{OBSERVATION}{n}" for n in range(1, counted["observations"] + 1)]
    refs += [f"{ANSWER}{n}" for n in range(1, counted["answers"] + 1)]
    items = [item for item in values_at(store, scope, EVIDENCE, refs) if item is not None]
    found = bodies(store, (item.get("body") for item in items))
    return [with_excerpt(item, found) for item in items]


def recalled(store: BaseStore, scope: str, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The notes this run recalled (M1…), as recorded: ids, versions and digests, never text."""
    count = cursor_of({CURSOR: cursor})["notes"]
    found = values_at(store, scope, RECALLED, [f"{RECOLLECTION}{n}" for n in range(1, count + 1)])
    return [item for item in found if item is not None]


def handoffs(store: BaseStore, scope: str, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The children's handoffs this run received, in order of receipt."""
    count = cursor_of({CURSOR: cursor})["handoffs"]
    found = values_at(store, scope, HANDOFFS, [position(n) for n in range(1, count + 1)])
    return [document for document in found if document is not None]


def model_calls(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], last: int | None = None
) -> list[dict[str, Any]]:
    """The committed model calls, or the `last` few of them, oldest first."""
    count = cursor_of({CURSOR: cursor})["model_calls"]
    first = 1 if last is None else max(1, count - last + 1)
    found = values_at(store, scope, MODEL_CALLS, [position(n) for n in range(first, count + 1)])
    return [call for call in found if call is not None]


def receipts_of_calls(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], call_ids: list[str]
) -> dict[str, str]:
    """Call id → signature, for those of `call_ids` that have a committed, sealed receipt."""
    return _indexed(store, scope, cursor, {CALLS: call_ids})[CALLS]


def executed_signatures(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], signatures: list[str]
) -> set[str]:
    return set(_indexed(store, scope, cursor, {SIGNATURES: signatures})[SIGNATURES])


def receipts_asked(
    store: BaseStore,
    scope: str,
    cursor: Mapping[str, Any],
    call_ids: list[str],
    signatures: list[str],
) -> tuple[dict[str, str], set[str]]:
    """`receipts_of_calls` and `executed_signatures` together, in one read."""
    found = _indexed(store, scope, cursor, {CALLS: call_ids, SIGNATURES: signatures})
    return found[CALLS], set(found[SIGNATURES])


def _indexed(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], wanted: Mapping[str, list[str]]
) -> dict[str, dict[str, str]]:
    """For each kind (`calls`, `signatures`), text → signature of the committed, sealed index
    entries found for `wanted`: what this process committed up to the cursor's head
    (`KnownReceipts`), else one store batch for all."""
    known = known_at(scope, cursor)
    if known is not None:
        return {
            kind: {text: known.index[kind][text] for text in texts if text in known.index[kind]}
            for kind, texts in wanted.items()
        }
    committed = cursor_of({CURSOR: cursor})["observations"]
    asked = [(kind, text) for kind, texts in wanted.items() for text in sorted(set(texts))]
    found = got(store, [GetOp(space(scope, kind), text_key(text)) for kind, text in asked])
    result: dict[str, dict[str, str]] = {kind: {} for kind in wanted}
    for (kind, text), item in zip(asked, found, strict=True):
        entry = item.value if item is not None else None
        if (
            entry is not None
            and item_intact(label(scope, kind), entry)
            and int(entry["ref"][1:]) <= committed
        ):
            result[kind][text] = entry["signature"]
    return result


def sealed_or_not(
    items: list[dict[str, Any]], scope: str, kind: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The items this run wrote, and those it did not."""
    ignore = EVENT_FIELDS_ADDED if kind == EVENTS else frozenset()
    body_fields = BODY_FIELDS if kind == EVIDENCE else frozenset()
    own: list[dict[str, Any]] = []
    foreign: list[dict[str, Any]] = []
    for item in items:
        intact = item_intact(label(scope, kind), item, ignore | body_fields)
        (own if intact else foreign).append(item)
    return own, foreign


def without_seal(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in item.items() if key != SEAL} for item in items]


def materialized(
    store: BaseStore, scope: str, values: Mapping[str, Any], shown_notes: ShownNotes
) -> dict[str, Any]:
    """A run's state with its record read back from the store up to its cursor, as readers show
    it (`events`, `evidence` with excerpts, `model_calls`, the notes it recalled, its own, as they
    may be shown now by `shown_notes`: `memory`; the grant's members); items the store lacks
    are left out."""
    cursor = cursor_of(values)
    notes = sealed_or_not(recalled(store, scope, cursor), scope, RECALLED)[0]
    return {
        **with_members(store, values),
        EVENTS: new_events(store, scope, 0, cursor),
        EVIDENCE: evidence(store, scope, cursor),
        MODEL_CALLS: model_calls(store, scope, cursor),
        **({"memory": shown_notes(store, without_seal(notes))} if notes else {}),
    }


def new_events(
    store: BaseStore, scope: str, before: int, cursor: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The events committed after event `before`, up to the cursor (for progress lines)."""
    count = cursor_of({CURSOR: cursor})["events"]
    found = values_at(store, scope, EVENTS, [position(n) for n in range(before + 1, count + 1)])
    return [event for event in found if event is not None]
