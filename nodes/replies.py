"""People's replies to what waited for them (a question, calls, a note), taken in once every
pending interaction has one: the run's deadline moves on by the time it waited; an answer becomes
evidence H1, H2, …; an approved note is saved (`nodes.remember`); approved or edited calls are
decided again by the guard like any proposal (`guards.decide.decide_after_people`).
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.store.base import BaseStore

from contract.codes import ANSWER, EventKind, InteractionKind, Outcome, Owner
from contract.shapes import Interaction
from contract.state import WarrantState
from guards.decide import batch_after_people, decide_after_people
from guards.human import apply_decisions
from guards.parking import unparked_deadline
from ledger.bodies import with_body_ref
from ledger.context import event
from ledger.store import cursor_of
from nodes.evidence import answer_item
from nodes.guard import context_for, parsed_for, record
from nodes.remember import remembered


def resolved(state: WarrantState, store: BaseStore, scope: str, at: float) -> dict[str, Any]:
    """Once every pending interaction has a reply: answers become evidence, calls are re-decided."""
    pending, replies = state["pending"], state.get("replies", {})
    if any(interaction["interaction_id"] not in replies for interaction in pending):
        return {"decision": {**state["decision"], "outcome": Outcome.AWAIT.value}}
    turn = state["turn"]
    unparked = _unparked(state, pending, at)
    state = cast("WarrantState", {**state, **unparked})
    questions = [
        interaction for interaction in pending if interaction["kind"] == InteractionKind.QUESTION
    ]
    if pending[0]["kind"] == InteractionKind.REMEMBER:
        note = cast("dict[str, Any]", pending[0])
        saved = remembered(store, state, note, replies[note["interaction_id"]], at)
        return unparked | saved | {"events": unparked["events"] + saved["events"], "pending": []}
    if questions:
        answered = [q for q in questions if not replies[q["interaction_id"]].get("expired")]
        unanswered = [q["question"] for q in questions if q not in answered]
        first = cursor_of(state)["answers"] + 1
        answers = [
            with_body_ref(
                cast(
                    "dict[str, Any]",
                    answer_item(
                        question, replies[question["interaction_id"]], f"{ANSWER}{first + index}"
                    ),
                )
            )
            for index, question in enumerate(answered)
        ]
        return unparked | {
            "pending": [],
            **({"evidence": answers} if answers else {}),
            **({"unanswered": [*state.get("unanswered", ()), *unanswered]} if unanswered else {}),
            "decision": {
                "turn": turn,
                "outcome": Outcome.ANSWERED.value,
                "calls": [],
                "status": None,
            },
        }
    decisions = {
        interaction["call"]["id"]: replies[interaction["interaction_id"]] for interaction in pending
    }
    asked_calls = cast("list[dict[str, Any]]", state["decision"]["calls"])
    calls, approved, rejections = apply_decisions(asked_calls, decisions)
    batch = parsed_for(batch_after_people(state["decision"]["summary"], calls), state["grant"])
    ctx = context_for(state, store, scope, at, batch, approved)
    decision = decide_after_people(batch, rejections, ctx)
    recorded = record(decision, state, scope, at)
    return {
        **recorded,
        **unparked,
        "events": unparked["events"] + recorded["events"],
        "pending": [],
    }


def _unparked(state: WarrantState, pending: list[Interaction], at: float) -> dict[str, Any]:
    """The run waited for people from the asking until now: its work deadline moves on by that
    much (never past the manifest's hard end), recorded as an `unparked` event."""
    asked_at = max(interaction.get("asked_at", at) for interaction in pending)
    deadline_at = unparked_deadline(state["deadline_at"], asked_at, at, state["grant"]["budget"])
    parked_s = round(max(0.0, at - asked_at), 3)
    moved = event(
        EventKind.UNPARKED,
        state["turn"],
        Owner.GUARD,
        at,
        parked_s=parked_s,
        deadline_at=deadline_at,
    )
    return {
        "deadline_at": deadline_at,
        "parked_s": state.get("parked_s", 0) + parked_s,
        "events": [moved],
    }
