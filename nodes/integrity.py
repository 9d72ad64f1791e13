"""The run's own writes, sealed; anything else in its state, found and refused.

Every node's update is sealed on its way out (`seal_update`): each list item and reply carries its
own seal, every other channel's value is sealed under its name in `seals`. Before a node uses its
state, `unsealed_fields` names whatever the run did not write itself (a client's
`update_state`, a command's `update`, a row edited in the database, a value copied from another
run); the node is then not run: the run ends with a `state_tampered` refusal, and its handover
shows only sealed values. Task payloads sent with `Send` (a call to execute, an interaction for a
person) are sealed by the node that sends them and checked by the task.

Every seal covers the thread it was written for (its scope), so a sealed value or task copied
from another run is not the run's own. Pure functions over plain state; the wrapping of nodes is
in `graph/build.py`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from langgraph.config import get_config

from guards.refusals import RUNTIME, Refusal, RefusalCode
from guards.seal import SEAL, is_sealed, item_is_sealed, seal_of, sealed_item
from nodes.context import event

INPUTS = frozenset({"scenario", "goal", "chooser", "message_id"})
"""Written by a caller's run input; admission checks and re-seals them."""
SEALED_ITEMS = {"events": frozenset({"seq", "prev"}), "evidence": frozenset(), "refusals": frozenset(),
                "model_calls": frozenset(), "tampered": frozenset()}  # fmt: skip
"""List channels, each item sealed on its own; the reducer adds an event's `seq` and `prev`
afterwards (`graph.state.append_events`)."""
REPLIES = "replies"
SEALS = "seals"
TAMPERED = "state_tampered"


def run_scope() -> str:
    """The thread of the run being advanced, inside a node or a router (LangGraph's config)."""
    return str(get_config()["configurable"].get("thread_id", ""))


def _label(scope: str, name: str) -> str:
    return f"{scope}\x00{name}"


def seal_update(update: dict[str, Any], scope: str) -> dict[str, Any]:
    """The update with every value it writes sealed for this run."""
    sealed: dict[str, Any] = {}
    seals: dict[str, str] = {}
    for name, value in update.items():
        if name in SEALED_ITEMS:
            sealed[name] = [sealed_item(_label(scope, name), item) for item in value]
        elif name == REPLIES:
            label = _label(scope, REPLIES)
            sealed[name] = {key: sealed_item(label, reply) for key, reply in value.items()}
        elif name != SEALS:
            sealed[name] = value
            seals[name] = seal_of(_label(scope, name), value)
    if seals:
        sealed[SEALS] = seals
    return sealed


def unsealed_fields(
    state: dict[str, Any], scope: str, skip: frozenset[str] = frozenset()
) -> list[str]:
    """The state's fields holding a value this run did not write itself."""
    seals = state.get(SEALS) or {}
    found = []
    for name, value in state.items():
        if name == SEALS or name in skip:
            continue
        label = _label(scope, name)
        if name in SEALED_ITEMS:
            intact = all(_item_intact(label, item, SEALED_ITEMS[name]) for item in value or ())
        elif name == REPLIES:
            intact = all(_item_intact(label, reply) for reply in (value or {}).values())
        else:
            intact = _intact(label, value, seals.get(name))
        if not intact:
            found.append(name)
    return found


def out_of_step(state: dict[str, Any]) -> list[str]:
    """Fields whose sealed values do not belong together: the run's own values put back out of
    order (a seal proves who wrote a value, not when). A call executed twice (a task replayed),
    a turn behind the ledger's, or people asked about calls of another decision (an older
    decision put back)."""
    found = []
    events = state.get("events", [])
    executed = [item["payload"].get("call_id") for item in events if item.get("type") == "executed"]  # fmt: skip
    if len(executed) != len(set(executed)):
        found.append("events")
    turn = state.get("turn", 0)
    if isinstance(turn, int) and any(isinstance(item.get("turn"), int) and item["turn"] > turn for item in events):  # fmt: skip
        found.append("turn")  # an older turn put back: the ledger has gone further
    decision = state.get("decision") or {}
    decided = {call.get("id") for call in decision.get("calls", [])}
    for interaction in state.get("pending") or []:
        asked = (interaction.get("call") or {}).get("id")
        if interaction.get("turn") != decision.get("turn") or (asked is not None and asked not in decided):  # fmt: skip
            found.append("decision")
            break
    return found


def unsealed_events(events: list[dict[str, Any]], scope: str) -> list[int]:
    """The sequence numbers of events this run did not write."""
    label = _label(scope, "events")
    return [event.get("seq", 0) for event in events if not _item_intact(label, event, SEALED_ITEMS["events"])]  # fmt: skip


def handover_is_sealed(state: dict[str, Any], scope: str) -> bool:
    """The state holds a handover, written by this run's own handover node."""
    seals = state.get(SEALS) or {}
    return "handover" in state and _intact(
        _label(scope, "handover"), state["handover"], seals.get("handover")
    )


def sealed_payload(kind: str, payload: dict[str, Any], scope: str) -> dict[str, Any]:
    return sealed_item(_label(scope, f"task:{kind}"), payload)


def payload_is_sealed(kind: str, payload: object, scope: str) -> bool:
    return item_is_sealed(_label(scope, f"task:{kind}"), payload)


def without_seal(payload: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in payload.items() if name != SEAL}


def tampering(where: str, fields: list[str], turn: int, at: float) -> dict[str, Any]:
    """The update that records tampering found by `where`; the run then ends."""
    detail = (
        f"{where}: the run's state holds values it did not write ({', '.join(sorted(fields))});"
        " they are not used and the run ends"
    )
    refusal = Refusal(RefusalCode.STATE_TAMPERED, RUNTIME, detail).to_dict()
    return {
        "tampered": [{"turn": turn, "where": where, "fields": sorted(fields)}],
        "refusals": [{"turn": turn, **refusal}],
        "events": [event("refused", turn, RUNTIME, at, **refusal)],
    }


def trusted(state: dict[str, Any], scope: str) -> dict[str, Any]:
    """The state with every value this run did not write left out (lists keep their sealed
    items)."""
    seals = state.get(SEALS) or {}
    kept: dict[str, Any] = {}
    for name, value in state.items():
        label = _label(scope, name)
        if name in SEALED_ITEMS:
            kept[name] = [item for item in value or () if _item_intact(label, item, SEALED_ITEMS[name])]  # fmt: skip
        elif name == REPLIES:
            kept[name] = {key: reply for key, reply in (value or {}).items() if _item_intact(label, reply)}  # fmt: skip
        elif name != SEALS and _intact(label, value, seals.get(name)):
            kept[name] = value
    return kept


def trusted_turn(state: dict[str, Any], scope: str) -> int:
    """The run's turn as it wrote it, else the latest turn of its sealed ledger."""
    turn = state.get("turn")
    seals = state.get(SEALS) or {}
    if isinstance(turn, int) and not isinstance(turn, bool) and _intact(_label(scope, "turn"), turn, seals.get("turn")):  # fmt: skip
        return turn
    label = _label(scope, "events")
    turns = [item["turn"] for item in state.get("events", []) if _item_intact(label, item, SEALED_ITEMS["events"]) and isinstance(item.get("turn"), int)]  # fmt: skip
    return max(turns, default=0)


# Within one process a run hands the same objects from step to step: an object already found
# sealed is not hashed again while it is the same object with the same seal (a value read back
# from a checkpoint is a new object, and is checked). Only a cache: correctness never depends on it.
_CHECKED: OrderedDict[tuple[str, int, object], object] = OrderedDict()
_CHECKED_MAX = 16_384
_CHECKED_LOCK = threading.Lock()


def _cached(label: str, value: object, seal: object, check: Callable[[], bool]) -> bool:
    if not isinstance(value, dict | list):
        return check()
    key = (label, id(value), seal)
    with _CHECKED_LOCK:
        if _CHECKED.get(key) is value:
            return True
    if not check():
        return False
    with _CHECKED_LOCK:
        _CHECKED[key] = value
        if len(_CHECKED) > _CHECKED_MAX:
            _CHECKED.popitem(last=False)
    return True


def _intact(label: str, value: object, seal: object) -> bool:
    return _cached(label, value, seal, lambda: is_sealed(label, value, seal))


def _item_intact(label: str, item: object, ignore: frozenset[str] = frozenset()) -> bool:
    seal = item.get(SEAL) if isinstance(item, dict) else None
    return _cached(label, item, seal, lambda: item_is_sealed(label, item, ignore))
