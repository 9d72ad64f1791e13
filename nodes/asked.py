"""What a decision asks of people: its interactions, each with a stable id.

A question (blocking or not), a call that waits for approval, or a note proposed for memory; each
carries the run's thread and, for a child, its lane (who asks), when it was asked and by when a
reply is due, and, for an approval, the people who may decide it when the scenario names them.
The guard writes them before the human node's `interrupt()`, so nothing is asked twice.
"""

from __future__ import annotations

import hashlib
from typing import Any, cast

from contract.codes import InteractionKind
from contract.shapes import Interaction
from guards.decision import Ask, NeedsApproval, Remember
from guards.parking import reply_by
from ledger.integrity import thread_and_lane


def asked(
    decision: Ask | NeedsApproval | Remember,
    scope: str,
    turn: int,
    at: float,
    grant: dict[str, Any],
) -> list[Interaction]:
    """Each with the run's thread and, for a child, its lane (who asks); its id covers both; an
    approval with the people who may decide it, when the scenario names them."""
    thread, lane = thread_and_lane(scope)
    base: dict[str, Any] = {
        "thread": thread,
        "turn": turn,
        "asked_at": at,
        "reply_by": reply_by(at, grant["budget"]),
    }
    if lane:
        base["lane"] = lane
    interactions: list[dict[str, Any]]
    match decision:
        case Remember(note=note):
            subject = InteractionKind.REMEMBER.value
            interactions = [
                {
                    "interaction_id": interaction_id(scope, turn, subject),
                    "kind": InteractionKind.REMEMBER.value,
                    **base,
                    "call": {"id": subject, "name": subject, "args": note},
                    "records": [],
                }
            ]
        case Ask(question=question, blocking=blocking):
            interactions = [
                {
                    "interaction_id": interaction_id(scope, turn, InteractionKind.QUESTION.value),
                    "kind": InteractionKind.QUESTION.value,
                    **base,
                    "question": question,
                    **({} if blocking else {"blocking": False}),
                }
            ]
        case NeedsApproval(calls=calls, needs_person=needs_person):
            approvers = {"approvers": list(grant["approvers"])} if grant.get("approvers") else {}
            interactions = [
                {
                    "interaction_id": interaction_id(scope, turn, call.id),
                    "kind": InteractionKind.APPROVAL.value,
                    **base,
                    "call": {"id": call.id, "name": call.name, "args": call.args},
                    "records": list(call.records.values()),
                    **approvers,
                }
                for call in calls
                if call.id in needs_person
            ]
    return cast("list[Interaction]", interactions)


def interaction_id(thread: str, turn: int, subject: str) -> str:
    """Stable and unique across threads: the same pending interaction always has the same id."""
    return "ix-" + hashlib.sha256(f"{thread}\x00{turn}\x00{subject}".encode()).hexdigest()[:16]
