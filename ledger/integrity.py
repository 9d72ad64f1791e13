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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from contract.codes import EventKind, InteractionKind, Owner, Status
from guards.refusals import Refusal, RefusalCode
from guards.seal import SEAL, is_sealed, item_is_sealed, seal_of, sealed_item
from ledger.context import event

INPUTS = frozenset({"scenario", "goal", "chooser", "message_id", "child", "parent", "schedule"})
"""Written by a caller's run input (a child's by the task that starts it); admission checks
and re-seals them."""
SEALED_ITEMS = frozenset({"refusals", "tampered", "arrivals"})
"""List channels, each item sealed on its own."""
REPLIES = "replies"
SEALS = "seals"
TAMPERED = Status.STATE_TAMPERED.value
"""The status of a run that found values it did not write (a plain string, as the state holds)."""


LANE = "__warrant_lane"
"""The configurable key under which a child investigation's graph is given its `ChildLane`;
absent for main. Private (`__`): no checkpointer copies it into a checkpoint's metadata (the
server's copies every other key, as JSON)."""


@dataclass(frozen=True)
class ChildLane:
    """A child investigation's lane (`t1`, `t1/t2`), as the delegating run's `child` task names it
    when it starts the child's graph (`graph.children`). An object, not a string: a run's config
    from a client (JSON: the server's API, an embedded caller's dict) cannot hold one, so no
    request can move a run into a lane, where its own seals would not be its own."""

    name: str


def lane_config(lane: str) -> dict[str, Any]:
    """The configurable a child's graph is started with."""
    return {LANE: ChildLane(lane)}


def run_scope() -> str:
    """The run being advanced, inside a node or a router (LangGraph's config)."""
    from langgraph.config import get_config  # here: a reader of stored runs loads no runtime

    return scope_in(get_config()["configurable"])


def scope_in(configurable: Mapping[str, Any]) -> str:
    """A run's scope: its thread, and a child's lane after a NUL (which no lane and no thread id
    the runtime issues holds): what its seals cover and where its record lives. Only a
    `ChildLane` names a lane; anything else under `LANE` came from outside and is not read."""
    lane = configurable.get(LANE)
    name = lane.name if isinstance(lane, ChildLane) else ""
    return child_scope(str(configurable.get("thread_id", "")), name)


def child_scope(thread: str, lane: str) -> str:
    return f"{thread}\x00{lane}" if lane else thread


def thread_and_lane(scope: str) -> tuple[str, str]:
    thread, _, lane = scope.partition("\x00")
    return thread, lane


def label(scope: str, name: str) -> str:
    return f"{scope}\x00{name}"


def seal_update(update: dict[str, Any], scope: str) -> dict[str, Any]:
    """The update with every value it writes sealed for this run."""
    sealed: dict[str, Any] = {}
    seals: dict[str, str] = {}
    for name, value in update.items():
        where = label(scope, name)
        if name in SEALED_ITEMS:
            sealed[name] = None if value is None else [_own_item(where, item) for item in value]
        elif name == REPLIES:
            sealed[name] = {key: _own_item(where, reply) for key, reply in value.items()}
        elif name != SEALS:
            sealed[name] = value
            seals[name] = seal_of(where, value)
            _remember(where, value, seals[name])
    if seals:
        sealed[SEALS] = seals
    return sealed


def _own_item(where: str, item: dict[str, Any]) -> dict[str, Any]:
    """An item sealed by this run, known intact to the next node of this process."""
    sealed = sealed_item(where, item)
    _remember(where, sealed, sealed[SEAL])
    return sealed


def unsealed_fields(
    state: Mapping[str, Any], scope: str, skip: frozenset[str] = frozenset()
) -> list[str]:
    """The state's fields holding a value this run did not write itself."""
    seals = state.get(SEALS) or {}
    found = []
    for name, value in state.items():
        if name == SEALS or name in skip:
            continue
        where = label(scope, name)
        if name in SEALED_ITEMS:
            intact = all(item_intact(where, item) for item in value or ())
        elif name == REPLIES:
            intact = all(item_intact(where, reply) for reply in (value or {}).values())
        else:
            intact = _intact(where, value, seals.get(name))
        if not intact:
            found.append(name)
    return found


def out_of_step(state: Mapping[str, Any], store: Any = None, scope: str = "") -> list[str]:
    """Fields whose sealed values do not belong together: the run's own values put back out of
    order (a seal proves who wrote a value, not when). A receipt arriving twice (a task
    replayed), a turn behind the ledger's, or people asked about calls of another decision (an
    older decision put back)."""
    found = []
    cursor = state.get("cursor") or {}
    receipts = [item["evidence"] for item in state.get("arrivals") or () if "evidence" in item]
    calls = [item.get("call_id") for item in receipts]
    committed = cursor.get("observations", 0)
    if len(calls) != len(set(calls)) or any(_ref_number(item) <= committed for item in receipts):
        found.append("arrivals")
    turn = state.get("turn", 0)
    if isinstance(turn, int) and isinstance(cursor.get("turn"), int) and cursor["turn"] > turn:
        found.append("turn")  # an older turn put back: the ledger has gone further
    behind = cursor.get("turn") if cursor else turn
    gap = (
        state.get("status") == Status.CAPABILITY_GAP
    )  # a turn that asked nothing and recorded nothing
    if isinstance(turn, int) and isinstance(behind, int) and behind < turn - (1 if gap else 0):
        found.append("cursor")  # an older cursor put back: each turn's first step records an event
    decision = state.get("decision") or {}
    decided = {call.get("id") for call in decision.get("calls", [])}
    for interaction in state.get("pending") or []:
        asked = (interaction.get("call") or {}).get("id")
        if (
            interaction.get("kind") == InteractionKind.REMEMBER
        ):  # a note, not a call: the decision's own
            asked = None if decision.get("note") == interaction["call"].get("args") else asked
        if interaction.get("turn") != decision.get("turn") or (
            asked is not None and asked not in decided
        ):
            found.append("decision")
            break
    return found


def _ref_number(item: dict[str, Any]) -> int:
    ref = item.get("ref")
    return int(ref[1:]) if isinstance(ref, str) and ref[1:].isdigit() else 0


def handover_is_sealed(state: Mapping[str, Any], scope: str) -> bool:
    """The state holds a handover, written by this run's own handover node."""
    return channel_is_sealed(state, scope, "handover")


def channel_is_sealed(state: Mapping[str, Any], scope: str, name: str) -> bool:
    """The state holds a value of channel `name`, written by this run."""
    seals = state.get(SEALS) or {}
    return name in state and _intact(label(scope, name), state[name], seals.get(name))


def sealed_payload(kind: str, payload: dict[str, Any], scope: str) -> dict[str, Any]:
    return sealed_item(label(scope, f"task:{kind}"), payload)


def payload_is_sealed(kind: str, payload: object, scope: str) -> bool:
    return item_is_sealed(label(scope, f"task:{kind}"), payload)


def without_seal(payload: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in payload.items() if name != SEAL}


def tampering(where: str, fields: list[str], turn: int, at: float) -> dict[str, Any]:
    """The update that records tampering found by `where`; the run then ends."""
    detail = (
        f"{where}: the run's state holds values it did not write ({', '.join(sorted(fields))});"
        " they are not used and the run ends"
    )
    refusal = Refusal(RefusalCode.STATE_TAMPERED, Owner.RUNTIME, detail).to_dict()
    return {
        "tampered": [{"turn": turn, "where": where, "fields": sorted(fields)}],
        "refusals": [{"turn": turn, **refusal}],
        "events": [event(EventKind.REFUSED, turn, Owner.RUNTIME, at, **refusal)],
    }


def trusted(state: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """The state with every value this run did not write left out (lists keep their sealed
    items)."""
    seals = state.get(SEALS) or {}
    kept: dict[str, Any] = {}
    for name, value in state.items():
        where = label(scope, name)
        if name in SEALED_ITEMS:
            kept[name] = [item for item in value or () if item_intact(where, item)]
        elif name == REPLIES:
            kept[name] = {
                key: reply for key, reply in (value or {}).items() if item_intact(where, reply)
            }
        elif name != SEALS and _intact(where, value, seals.get(name)):
            kept[name] = value
    return kept


def trusted_turn(state: Mapping[str, Any], scope: str) -> int:
    """The run's turn as it wrote it, else the turn of its sealed cursor."""
    seals = state.get(SEALS) or {}
    readers: tuple[tuple[str, Callable[[Any], object]], ...] = (
        ("turn", lambda value: value),
        ("cursor", lambda value: value.get("turn")),
    )
    for name, read in readers:
        value = state.get(name)
        if value is not None and _intact(label(scope, name), value, seals.get(name)):
            turn = read(value) if isinstance(value, dict) or name == "turn" else None
            if isinstance(turn, int) and not isinstance(turn, bool):
                return turn
    return 0


# Within one process a run hands the same objects from step to step: an object already found
# sealed is not hashed again while it is the same object with the same seal (a value read back
# from a checkpoint is a new object, and is checked). An immutable value (a string, an integer,
# None) is found again by value: the same value under the same label and seal seals the same.
# Only a cache: correctness never depends on it.
_CHECKED: OrderedDict[tuple[object, ...], object] = OrderedDict()
_CHECKED_MAX = 16_384
_CHECKED_LOCK = threading.Lock()
_BY_VALUE = (str, int, type(None))


def _cache_key(label: str, value: object, seal: object) -> tuple[tuple[object, ...], object] | None:
    if isinstance(value, dict | list):
        return (label, id(value), seal), value
    if type(value) in _BY_VALUE or type(value) is bool:
        return (label, type(value), value, seal), True  # `True` is not `1`: the type is keyed
    return None


def _cached(label: str, value: object, seal: object, check: Callable[[], bool]) -> bool:
    keyed = _cache_key(label, value, seal)
    if keyed is None:
        return check()
    key, held = keyed
    with _CHECKED_LOCK:
        if _CHECKED.get(key) is held:
            return True
    if not check():
        return False
    _remember(label, value, seal)
    return True


def _remember(label: str, value: object, seal: object) -> None:
    """`value` is intact under `seal`: this process sealed or checked it."""
    keyed = _cache_key(label, value, seal)
    if keyed is None:
        return
    with _CHECKED_LOCK:
        _CHECKED[keyed[0]] = keyed[1]
        if len(_CHECKED) > _CHECKED_MAX:
            _CHECKED.popitem(last=False)


def _intact(label: str, value: object, seal: object) -> bool:
    return _cached(label, value, seal, lambda: is_sealed(label, value, seal))


def item_intact(label: str, item: object, ignore: frozenset[str] = frozenset()) -> bool:
    seal = item.get(SEAL) if isinstance(item, dict) else None
    return _cached(label, item, seal, lambda: item_is_sealed(label, item, ignore))
