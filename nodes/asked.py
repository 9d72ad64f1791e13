"""What a decision asks of people: its interactions, each with a stable id.

A question (blocking or not), a call that waits for approval, or a note proposed for memory; each
carries the run's thread and, for a child, its lane (who asks), when it was asked and by when a
reply is due, and, for an approval, the people who may decide it when the scenario names them.
The guard writes them before the human node's `interrupt()`, so nothing is asked twice.
"""

from __future__ import annotations

import hashlib
from typing import Any

from contract.codes import InteractionKind, Outcome
from guards.decide import Decision
from guards.parking import reply_by
from nodes.integrity import thread_and_lane


def asked(
    decision: Decision,
    calls: list[dict[str, Any]],
    scope: str,
    turn: int,
    at: float,
    grant: dict[str, Any],
) -> list[dict[str, Any]]:
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
    if decision.outcome == Outcome.REMEMBER and decision.note is not None:
        note = {
            "id": InteractionKind.REMEMBER.value,
            "name": InteractionKind.REMEMBER.value,
            "args": decision.note,
        }
        return [
            {
                "interaction_id": interaction_id(scope, turn, note["id"]),
                "kind": InteractionKind.REMEMBER.value,
                **base,
                "call": note,
                "records": [],
            }
        ]
    if decision.outcome in (Outcome.ASK, Outcome.ASKED):
        return [
            {
                "interaction_id": interaction_id(scope, turn, InteractionKind.QUESTION.value),
                "kind": InteractionKind.QUESTION.value,
                **base,
                "question": decision.question,
                **({"blocking": False} if decision.outcome == Outcome.ASKED else {}),
            }
        ]
    return [
        {
            "interaction_id": interaction_id(scope, turn, call["id"]),
            "kind": InteractionKind.APPROVAL.value,
            **base,
            "call": {"id": call["id"], "name": call["name"], "args": call["args"]},
            "records": list(call["records"].values()),
            **({"approvers": list(grant["approvers"])} if grant.get("approvers") else {}),
        }
        for call in calls
        if call["id"] in decision.needs_person
    ]


def interaction_id(thread: str, turn: int, subject: str) -> str:
    """Stable and unique across threads: the same pending interaction always has the same id."""
    return "ix-" + hashlib.sha256(f"{thread}\x00{turn}\x00{subject}".encode()).hexdigest()[:16]
