"""A person's stop and corrections: asked from outside the run (`warrant stop`, `warrant correct`),
taken at the run's next safe point.

Each is an item in the store under the run's thread (its children read the same stop), put by
whoever asks, without the run's lease; the guard reads them in one batch before it decides a
proposal, where nothing is half done. A stop ends the run `stopped`, the handover naming who stopped
it, when and why; a call in flight when it is asked completes and is receipted: the executor is
never cut. A correction is adopted as a person's statement (`H…` evidence, like an answer): the
chooser is shown it from then on, and it is never authority — the guard decides as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from langgraph.store.base import BaseStore, PutOp

from contract.codes import ANSWER, EventKind, Status
from contract.state import StepUpdate
from ledger.bodies import with_body_ref
from ledger.context import event
from ledger.integrity import thread_and_lane
from ledger.record import RunRecord
from ledger.store import CONTROL
from nodes.evidence import correction_item

STOP = "stop"
CORRECTION = "correction-"
MAX_TEXT = 2000
"""Characters of a correction or a stop's reason."""
MAX_CORRECTIONS = 100
"""Corrections one run takes; a later one is refused when it is given."""


class StopRequest(TypedDict):
    by: str
    """Who asked (`--as`, else the OS user; the authenticated user on the server)."""
    at: float
    reason: str


class Correction(TypedDict):
    by: str
    at: float
    text: str


class CorrectionRefused(ValueError):
    """A correction the run cannot take (it took its last one already)."""


def save_correction(store: BaseStore, thread: str, correction: Correction) -> int:
    """Save a correction for the run on `thread` to take at its next turn; returns its number."""
    record = RunRecord(store, thread)
    put = next_correction(record, record.values(CORRECTION_KEYS), correction)
    record.write([put])
    return int(put.key.removeprefix(CORRECTION))


CORRECTION_KEYS = tuple((CONTROL, f"{CORRECTION}{n}") for n in range(1, MAX_CORRECTIONS + 1))
"""The run's items that find its next free correction number (`next_correction`)."""


def next_correction(record: RunRecord, found: list[Any | None], correction: Correction) -> PutOp:
    """The write of `correction` under the first number `CORRECTION_KEYS` found free."""
    number = next((n for n, value in enumerate(found, 1) if value is None), None)
    if number is None:
        raise CorrectionRefused(f"the run took {MAX_CORRECTIONS} corrections already")
    return record.put_op(CONTROL, f"{CORRECTION}{number}", dict(correction))


@dataclass(frozen=True)
class Asked:
    """What people asked of the run since its last turn: a stop, corrections in order."""

    stop: StopRequest | None
    corrections: tuple[Correction, ...]


def asked_of(store: BaseStore, scope: str, taken: int) -> Asked:
    """The stop asked of the run this scope belongs to (a child's lane reads its run's), and the
    corrections after the `taken` ones (a child takes none: they are its run's): one batch, and
    one more per further correction found."""
    thread, lane = thread_and_lane(scope)
    record = RunRecord(store, thread)
    stop, *next_one = record.values(
        [(CONTROL, STOP), *([] if lane else [(CONTROL, f"{CORRECTION}{taken + 1}")])]
    )
    corrections: list[Correction] = []
    while next_one and next_one[0] is not None and _is_correction(next_one[0]):
        value = next_one[0]
        corrections.append(Correction(by=value["by"], at=value["at"], text=value["text"]))
        next_one = record.values([(CONTROL, f"{CORRECTION}{taken + len(corrections) + 1}")])
    return Asked(_stop_of(stop), tuple(corrections))


def _is_correction(value: dict[str, Any]) -> bool:
    return (
        type(value.get("by")) is str
        and type(value.get("at")) in (int, float)
        and type(value.get("text")) is str
    )


def request_stop(store: BaseStore, thread: str, request: StopRequest) -> None:
    """Ask the run on `thread` to stop; the first request stands (a second does not rewrite who
    stopped it)."""
    if stop_requested(store, thread) is None:
        record = RunRecord(store, thread)
        record.write([stop_put(record, request)])


def stop_put(record: RunRecord, request: StopRequest) -> PutOp:
    """The write that asks the run `record` holds to stop."""
    return record.put_op(CONTROL, STOP, dict(request))


def stop_requested(store: BaseStore, scope: str) -> StopRequest | None:
    """The stop asked of the run this scope belongs to (a child's lane reads its run's)."""
    thread = thread_and_lane(scope)[0]
    return _stop_of(RunRecord(store, thread).values([(CONTROL, STOP)])[0])


def _stop_of(value: dict[str, Any] | None) -> StopRequest | None:
    if (
        value is None
        or type(value.get("by")) is not str
        or type(value.get("at")) not in (int, float)
        or type(value.get("reason")) is not str
    ):
        return None
    return StopRequest(by=value["by"], at=value["at"], reason=value["reason"])


def stopped_update(request: StopRequest, turn: int, at: float) -> StepUpdate:
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


def adopted_corrections(
    corrections: tuple[Correction, ...], taken: int, answers: int, turn: int, at: float
) -> dict[str, Any]:
    """The corrections taken in as `H…` evidence after `answers` refs: for each, a `corrected`
    event (its author, when it was given) and an `adopted` one; the count taken so far."""
    if not corrections:
        return {}
    evidence, events = [], []
    for offset, correction in enumerate(corrections):
        number, ref = taken + offset + 1, f"{ANSWER}{answers + offset + 1}"
        evidence.append(with_body_ref(correction_item(correction, number, ref, turn)))
        actor = f"human:{correction['by']}"
        events += [
            event(
                EventKind.CORRECTED,
                turn,
                actor,
                correction["at"],
                correction=number,
                text=correction["text"],
            ),
            event(
                EventKind.ADOPTED,
                turn,
                "guard",
                at,
                interaction_id=f"{CORRECTION}{number}",
                ref=ref,
            ),
        ]
    return {"evidence": evidence, "events": events, "corrections": taken + len(corrections)}
