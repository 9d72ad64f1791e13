"""A person's stop: asked from outside the run (`warrant stop`), taken at the run's next safe point.

The request is an item in the store under the run's thread (its children read the same one), put
by whoever asks; the run reads it where nothing is half done — the guard, before it decides a
proposal, and the choose node, before it asks a model — and ends `stopped`, the handover naming who
stopped it, when and why. A call in flight when the stop is asked completes and is receipted: the
executor is never cut.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.store.base import BaseStore, GetOp, PutOp

from contract.codes import EventKind, Status
from nodes.context import event
from nodes.integrity import thread_and_lane
from nodes.record import got, space

CONTROL = "control"
STOP = "stop"


class StopRequest(TypedDict):
    by: str
    """Who asked (`--as`, else the OS user; the authenticated user on the server)."""
    at: float
    reason: str


def request_stop(store: BaseStore, thread: str, request: StopRequest) -> None:
    """Ask the run on `thread` to stop; the first request stands (a second does not rewrite who
    stopped it)."""
    if stop_requested(store, thread) is None:
        store.batch([PutOp(space(thread, CONTROL), STOP, dict(request), index=False)])


def stop_requested(store: BaseStore, scope: str) -> StopRequest | None:
    """The stop asked of the run this scope belongs to (a child's lane reads its run's)."""
    thread = thread_and_lane(scope)[0]
    found = got(store, [GetOp(space(thread, CONTROL), STOP)])[0]
    if found is None or not _well_formed(found.value):
        return None
    return StopRequest(by=found.value["by"], at=found.value["at"], reason=found.value["reason"])


def _well_formed(value: dict[str, Any]) -> bool:
    return (
        type(value.get("by")) is str
        and type(value.get("at")) in (int, float)
        and type(value.get("reason")) is str
    )


def stopped_update(request: StopRequest, turn: int, at: float) -> dict[str, Any]:
    """What the run records when it takes a stop in: its end, and who stopped it, when and why
    (the handover's `stopped_by`; the chooser's stop text stays the chooser's)."""
    return {
        "status": Status.STOPPED.value,
        "stopped_by": dict(request),
        "events": [
            event(
                EventKind.STOP_REQUESTED,
                turn,
                f"human:{request['by']}",
                at,
                asked_at=request["at"],
                reason=request["reason"],
            )
        ],
    }
