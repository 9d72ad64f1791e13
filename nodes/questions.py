"""Non-blocking questions: asked, and the run goes on; the answer is adopted when it has come.

(On the LangGraph server a client saves the reply with a store `put` under the run's `replies`,
which the server's auth admits only in that shape, signed by the authenticated user; the run
checks every saved reply against its own open question again before adopting it.)

A chooser's `ask_user` with `"blocking": false` opens a question without an interrupt: the run
keeps choosing. A person's reply is saved where the run finds it (the store, under the thread's
`replies`, keyed by interaction id: written without the run's lease, so a busy run does not refuse
it), and the run adopts it at its next guard step: the reply as saved (`replied`, with the time it
was saved) and its adoption (`adopted`, with the ref it became) are two events, since a reply
saved is not yet a reply the run has seen. An answer adopted is evidence `H…`, like a blocking one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore

from contract.codes import ANSWER, EventKind
from contract.shapes import Event
from guards.human import check_reply
from guards.refusals import Refusal
from ledger.bodies import with_body_ref
from ledger.context import event
from ledger.record import RunRecord
from nodes.evidence import answer_item
from nodes.human import person_of

REPLIES = "replies"


def save_reply(
    store: BaseStore, scope: str, question: Mapping[str, Any], reply: object, at: float
) -> dict[str, Any] | Refusal:
    """The reply checked against its open question and saved for the run; or why not. A second
    reply to the same question replaces the first until the run has adopted one."""
    checked = check_reply(question, reply)
    if isinstance(checked, Refusal):
        return checked
    saved = {"reply": checked, "saved_at": at}
    RunRecord(store, scope).put(REPLIES, question["interaction_id"], saved)
    return checked


def adopted(
    state: Mapping[str, Any], store: BaseStore, scope: str, answers: int, at: float
) -> dict[str, Any]:
    """The state update adopting every saved reply to the run's open questions: evidence after
    `answers` H refs, a `replied` and an `adopted` event each, the questions no longer open."""
    open_questions = state.get("open_questions") or []
    if not open_questions:
        return {}
    evidence: list[dict[str, Any]] = []
    events: list[Event] = []
    still_open: list[dict[str, Any]] = []
    replies = RunRecord(store, scope).values(
        [(REPLIES, question["interaction_id"]) for question in open_questions]
    )
    for question, saved in zip(open_questions, replies, strict=True):
        reply = check_reply(question, saved.get("reply")) if saved is not None else None
        if saved is None or isinstance(reply, Refusal) or reply is None:
            still_open.append(question)  # nothing usable saved: the question stays open
            continue
        ref = f"{ANSWER}{answers + len(evidence) + 1}"
        evidence.append(with_body_ref(answer_item(question, reply, ref)))
        iid, turn = question["interaction_id"], state["turn"]
        saved_at = saved["saved_at"]
        replied = event(
            EventKind.REPLIED, turn, person_of(reply), saved_at, interaction_id=iid, reply=reply
        )
        events += [
            replied,
            event(EventKind.ADOPTED, turn, "guard", at, interaction_id=iid, ref=ref),
        ]
    if not evidence:
        return {}
    return {"evidence": evidence, "events": events, "open_questions": still_open}
