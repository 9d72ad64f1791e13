"""What waits for people across runs: the inbox's rows, answers saved for a run's open
questions (without its lease: the run may be advancing elsewhere), and answers that came after a
run ended (`warrant continue` takes them in)."""

from __future__ import annotations

from typing import Any

from contract.errors import ErrorKind
from graph.build import saver_of, store_of
from graph.present.ledger_lines import interaction_summary
from graph.runs.interactions import InteractionError
from graph.runs.reading import RunError, config_of, reading_graph, run_result
from graph.runs.runner import Reply
from guards.refusals import Refusal
from ledger.integrity import child_scope
from ledger.persistence.retention import thread_ids
from ledger.record import RunRecord
from nodes.continuation import NotContinuable, carried
from nodes.questions import REPLIES, save_reply


def save_answer(
    thread_id: str, db: str, interaction_id: str, make_reply: Reply, at: float
) -> dict[str, Any] | None:
    """A reply to one of the run's open (non-blocking) questions, saved at `at` (seconds since the
    epoch) for the run to adopt at its next turn, without its lease (the run may be advancing
    elsewhere); None when `interaction_id` is not an open question of the run."""
    with reading_graph(db) as graph:
        values = graph.get_state(config_of(thread_id)).values
        question = next(
            (
                q
                for q in values.get("open_questions") or ()
                if q["interaction_id"] == interaction_id
            ),
            None,
        )
        if question is None:
            return None
        try:
            body = {**make_reply(question["kind"]), "interaction_id": interaction_id}
        except InteractionError as exc:
            raise RunError(ErrorKind.REPLY_REFUSED, str(exc)) from None
        scope = child_scope(thread_id, question["lane"]) if question.get("lane") else thread_id
        saved = save_reply(store_of(graph), scope, question, body, at)
    if isinstance(saved, Refusal):
        raise RunError(ErrorKind.REPLY_REFUSED, f"the reply is refused: {saved.detail}")
    return saved


def late_answers(db: str, thread_id: str) -> list[dict[str, Any]]:
    """Answers people saved for a finished run's open questions after it ended (`warrant
    continue` takes them in): each with its interaction, question, answer and author."""
    with reading_graph(db) as graph:
        grant = graph.get_state(config_of(thread_id)).values.get("grant") or {}
        try:
            found = carried(store_of(graph), thread_id, grant.get("manifest_sha256", ""))[
                "evidence"
            ]
        except NotContinuable:
            return []
    return [
        {
            "interaction_id": item["call_id"],
            "question": item["args"]["question"],
            "answer": "\n".join(line["text"] for line in item["excerpt"]),
            **({"by": item["by"]} if item.get("by") else {}),
        }
        for item in found
        if item.get("late_for") == thread_id and "carried_from" not in item
    ]


def waiting(db: str, at: float) -> list[dict[str, Any]]:
    """Every interaction waiting for a person in the store, oldest first, with its age at `at`."""
    rows = []
    with reading_graph(db) as graph:
        for thread_id in thread_ids(saver_of(graph)):
            result = run_result(graph, config_of(thread_id))
            unanswered = _unanswered(store_of(graph), thread_id, result.values)
            for interaction in [*result.pending, *unanswered]:
                going_on = " (the run goes on)" if interaction.get("blocking") is False else ""
                rows.append(
                    {
                        "scenario": result.values.get("grant", {}).get("id", "?"),
                        "thread": thread_id,
                        "turn": interaction["turn"],
                        "interaction_id": interaction["interaction_id"],
                        "kind": interaction["kind"],
                        "summary": interaction_summary(interaction) + going_on,
                        "age_s": max(0.0, at - interaction["asked_at"]),
                        "interaction": interaction,
                    }
                )
    return sorted(rows, key=lambda row: -row["age_s"])


def open_questions(db: str, thread_id: str) -> list[dict[str, Any]]:
    """The run's open (non-blocking) questions nobody has answered yet: they wait for a person
    without an interrupt, so a run's `pending` (its interrupts) does not hold them."""
    with reading_graph(db) as graph:
        values = graph.get_state(config_of(thread_id)).values
        return _unanswered(store_of(graph), thread_id, values)


def _unanswered(store: Any, thread_id: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    answered = _saved_answers(store, thread_id)
    return [q for q in values.get("open_questions") or () if q["interaction_id"] not in answered]


def _saved_answers(store: Any, thread_id: str) -> set[str]:
    """The open questions of a run that already have a saved reply (`nodes.questions`)."""
    return {item.key for item in RunRecord(store, thread_id).listed(REPLIES, limit=100)}
