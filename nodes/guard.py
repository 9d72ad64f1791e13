"""The guard node: the only way from a proposal to a tool. It asks `guards` and records.

Approved calls fan out with `Send`, one task per call, each carrying its pre-assigned evidence ref
(refs follow call order, so a recovered run numbers its evidence exactly as an uninterrupted one).
A question, a call that needs a person or a note proposed for memory becomes a pending interaction
(`nodes.asked`), written here — before the human node's `interrupt()` — so that nothing is
recorded twice when that node re-runs on resume. When every pending interaction has its reply, the
guard resolves them: an answer becomes evidence H1, H2, …; approved or edited calls are checked
again like any proposal; an approved note is saved (`nodes.remember`). An approved recall is a look
into memory, not a tool: its notes are found here and recorded as M1, M2, … (`nodes.recall`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.config import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Send
from pydantic import ValidationError

from contract.codes import ANSWER, OBSERVATION, EventKind, InteractionKind, Outcome, Status
from guards.action import parse_action
from guards.decide import Decision, GuardContext, Refs, call_signature, decide, decide_after_people
from guards.hooks import scenario_hooks
from guards.human import apply_decisions
from guards.parking import unparked_deadline
from guards.refusals import Refusal, RefusalCode
from nodes.asked import asked
from nodes.choosers.route import Route
from nodes.context import WarrantContext, event, now
from nodes.evidence import answer_item
from nodes.integrity import run_scope, sealed_payload
from nodes.model import ACTOR as MODEL_ACTOR
from nodes.questions import adopted
from nodes.recall import recall_update
from nodes.record import (
    cursor_of,
    executed_signatures,
    receipts_asked,
    receipts_of_calls,
    with_body_ref,
)
from nodes.remember import remembered
from tools.catalog import tools_of
from tools.records.registry import Scenario

GUARD = "guard"


def guard(
    state: dict[str, Any], config: RunnableConfig, runtime: Runtime[WarrantContext]
) -> dict[str, Any]:
    at = now(runtime)
    scope = run_scope()
    looked_up = _Lookups(runtime.store, scope, cursor_of(state))
    update = (
        _resolve(state, scope, at, looked_up)
        if state.get("pending")
        else _decided(state, scope, at, looked_up)
    )
    answers = looked_up.cursor["answers"] + sum(
        item["ref"].startswith(ANSWER) for item in update.get("evidence", ())
    )
    return _with_answers_adopted(update, state, runtime.store, scope, answers, at)


def _decided(state: dict[str, Any], scope: str, at: float, looked_up: _Lookups) -> dict[str, Any]:
    """The proposal decided and recorded."""
    # A turn the runtime did not ask the model for (its budget or deadline spent) is decided at the
    # time it was found spent, should this node's clock read earlier (a clock stepped back).
    decided_at = max(at, (state.get("proposal") or {}).get("at", at))
    raw = state["proposal"]["raw"]
    looked_up = _asked_at_once(looked_up, raw, state["grant"]["profile"])
    decision, attempts = _count_model_failures(
        decide(raw, context_for(state, decided_at, looked_up)), state
    )
    update = record(decision, state, scope, at) | attempts
    if decision.outcome == Outcome.RECALL:
        found = recall_update(looked_up.store, state, scope, list(decision.recalls), at)
        update |= {**found, "events": [*update["events"], *found.get("events", ())]}
    return update


def _with_answers_adopted(
    update: dict[str, Any],
    state: dict[str, Any],
    store: BaseStore,
    scope: str,
    answers: int,
    at: float,
) -> dict[str, Any]:
    """This step's update, with the answers saved for the run's open questions taken in."""
    asking = {
        **state,
        "open_questions": update.get("open_questions", state.get("open_questions", [])),
    }
    taken = adopted(asking, store, scope, answers, at)
    if not taken:
        return update
    return update | {
        "evidence": [*update.get("evidence", ()), *taken["evidence"]],
        "events": [*update.get("events", ()), *taken["events"]],
        "open_questions": taken["open_questions"],
    }


def _count_model_failures(
    decision: Decision, state: dict[str, Any]
) -> tuple[Decision, dict[str, Any]]:
    """Malformed model output is a failed attempt; enough of them in a row end the run."""
    proposal = state["proposal"]
    if proposal.get("actor") != MODEL_ACTOR or proposal.get("raw") is None:
        return decision, {}
    if not any(refusal.code is RefusalCode.MALFORMED_ACTION for refusal in decision.refusals):
        return decision, {"failed_attempts": 0}
    failed = state.get("failed_attempts", 0) + 1
    if decision.outcome == Outcome.REFUSED and Route.model_validate(state["route"]).gives_up_after(
        failed
    ):
        decision = replace(decision, outcome=Outcome.END, status=Status.MODEL_FAILED)
    return decision, {"failed_attempts": failed}


@dataclass(frozen=True)
class _Lookups:
    """The run's receipts as the guard asks for them: by call id and by signature, each a store
    read of committed receipts only (a run's record is never listed to decide one proposal).
    What a proposal will be asked about is read in one batch beforehand (`_asked_at_once`)."""

    store: BaseStore
    scope: str
    cursor: dict[str, Any]
    read_ids: Mapping[str, str | None] = field(default_factory=dict)
    """Call id read beforehand → the signature of its receipt, or None for no receipt."""
    read_signatures: Mapping[str, bool] = field(default_factory=dict)
    """Signature read beforehand → whether a receipt has it."""

    def receipts(self) -> Mapping[str, str]:
        return _ByCallId(self)

    def signatures(self) -> Container[str]:
        return _BySignature(self)


@dataclass(frozen=True)
class _ByCallId(Mapping[str, str]):
    lookups: _Lookups

    def __getitem__(self, call_id: str) -> str:
        if call_id in self.lookups.read_ids:
            signature = self.lookups.read_ids[call_id]
            if signature is None:
                raise KeyError(call_id)
            return signature
        found = receipts_of_calls(
            self.lookups.store, self.lookups.scope, self.lookups.cursor, [call_id]
        )
        return found[call_id]

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a run's receipts are looked up by call id, never listed")

    def __len__(self) -> int:
        return self.lookups.cursor["observations"]


@dataclass(frozen=True)
class _BySignature(Container[str]):
    lookups: _Lookups

    def __contains__(self, signature: object) -> bool:
        if not isinstance(signature, str):
            return False
        if signature in self.lookups.read_signatures:
            return self.lookups.read_signatures[signature]
        found = executed_signatures(
            self.lookups.store, self.lookups.scope, self.lookups.cursor, [signature]
        )
        return signature in found


def _asked_at_once(looked_up: _Lookups, raw: object, profile: str) -> _Lookups:
    """The lookups with the receipts the guard will ask about for this proposal read in one
    batch: its calls' ids, and the signatures of those whose arguments validate (the guard's own
    parse and validation, done once more here; a call they refuse is never looked up)."""
    document = parse_action(raw)
    if isinstance(document, Refusal) or not document.tool_calls:
        return looked_up
    catalog = tools_of(profile)
    ids = [call.id for call in document.tool_calls]
    signatures = []
    for call in document.tool_calls:
        spec = catalog.get(call.name)
        with contextlib.suppress(ValidationError, RecursionError):
            if spec is not None:
                signatures.append(
                    call_signature(
                        spec.name, spec.args_model.model_validate(call.args).model_dump()
                    )
                )
    receipts, seen = receipts_asked(
        looked_up.store, looked_up.scope, looked_up.cursor, ids, signatures
    )
    return replace(
        looked_up,
        read_ids={call_id: receipts.get(call_id) for call_id in ids},
        read_signatures={signature: signature in seen for signature in signatures},
    )


def context_for(
    state: dict[str, Any],
    at: float,
    looked_up: _Lookups,
    person_approved: frozenset[str] = frozenset(),
) -> GuardContext:
    cursor = looked_up.cursor
    scenario = Scenario.model_validate(state["grant"])
    return GuardContext(
        scenario=scenario,
        turn=state["turn"],
        now=at,
        deadline_at=state["deadline_at"],
        evidence_refs=Refs(cursor["observations"], cursor["answers"], cursor["notes"]),
        executed=looked_up.receipts(),
        executed_signatures=looked_up.signatures(),
        refused_choices=state.get("refused_choices", 0),
        questions_asked=state.get("questions_asked", 0),
        person_approved=person_approved,
        hooks=scenario_hooks(scenario),
        depth=state.get("depth", 0),
        delegated=frozenset(state.get("delegated", ())),
        child_turns=cursor["child_turns"],
        child_questions=cursor["child_questions"],
        recalled_queries=frozenset(state.get("recalls", ())),
    )


def _resolve(state: dict[str, Any], scope: str, at: float, looked_up: _Lookups) -> dict[str, Any]:
    """Once every pending interaction has a reply: answers become evidence, calls are re-decided."""
    pending, replies = state["pending"], state.get("replies", {})
    if any(interaction["interaction_id"] not in replies for interaction in pending):
        return {"decision": {**state["decision"], "outcome": Outcome.AWAIT.value}}
    turn = state["turn"]
    unparked = _unparked(state, pending, at)
    state = {**state, **unparked}
    questions = [
        interaction for interaction in pending if interaction["kind"] == InteractionKind.QUESTION
    ]
    if pending[0]["kind"] == InteractionKind.REMEMBER:
        saved = remembered(
            looked_up.store, state, pending[0], replies[pending[0]["interaction_id"]], at
        )
        return unparked | saved | {"events": unparked["events"] + saved["events"], "pending": []}
    if questions:
        answered = [q for q in questions if not replies[q["interaction_id"]].get("expired")]
        unanswered = [q["question"] for q in questions if q not in answered]
        first = looked_up.cursor["answers"] + 1
        answers = [
            with_body_ref(
                answer_item(
                    question, replies[question["interaction_id"]], f"{ANSWER}{first + index}"
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
    calls, approved, rejections = apply_decisions(state["decision"]["calls"], decisions)
    decision = decide_after_people(
        state["decision"]["summary"], calls, rejections, context_for(state, at, looked_up, approved)
    )
    recorded = record(decision, state, scope, at)
    return {
        **recorded,
        **unparked,
        "events": unparked["events"] + recorded["events"],
        "pending": [],
    }


def _unparked(state: dict[str, Any], pending: list[dict[str, Any]], at: float) -> dict[str, Any]:
    """The run waited for people from the asking until now: its work deadline moves on by that
    much (never past the manifest's hard end), recorded as an `unparked` event."""
    asked_at = max(interaction.get("asked_at", at) for interaction in pending)
    deadline_at = unparked_deadline(state["deadline_at"], asked_at, at, state["grant"]["budget"])
    parked_s = round(max(0.0, at - asked_at), 3)
    moved = event(
        EventKind.UNPARKED, state["turn"], GUARD, at, parked_s=parked_s, deadline_at=deadline_at
    )
    return {
        "deadline_at": deadline_at,
        "parked_s": state.get("parked_s", 0) + parked_s,
        "events": [moved],
    }


def record(decision: Decision, state: dict[str, Any], scope: str, at: float) -> dict[str, Any]:
    """The state update and ledger entries for one decision."""
    turn = state["turn"]
    calls = [
        {"id": call.id, "name": call.name, "args": call.args, "records": call.records}
        for call in decision.calls
    ]
    if decision.outcome == Outcome.EXECUTE:
        first_ref = cursor_of(state)["observations"] + 1
        calls = [
            {
                **call,
                "ref": f"{OBSERVATION}{first_ref + index}",
                "sources": {
                    field: record.model_dump() for field, record in approved.resolved.items()
                },
            }
            for index, (call, approved) in enumerate(zip(calls, decision.calls, strict=True))
        ]
    tasks = [{"order": index, **task.model_dump()} for index, task in enumerate(decision.tasks)]
    refusals = [{"turn": turn, **refusal.to_dict()} for refusal in decision.refusals]
    events = [
        event(EventKind.REFUSED, turn, GUARD, at, **refusal.to_dict())
        for refusal in decision.refusals
    ]
    if decision.outcome == Outcome.EXECUTE:
        events += [
            event(
                EventKind.APPROVED,
                turn,
                GUARD,
                at,
                call={key: value for key, value in call.items() if key != "sources"},
            )
            for call in calls
        ]
        # Committed before any call runs: a call with `executing` and no `executed` may have run.
        events += [
            event(
                EventKind.EXECUTING,
                turn,
                GUARD,
                at,
                call_id=call["id"],
                ref=call["ref"],
                tool=call["name"],
            )
            for call in calls
        ]
    if tasks:
        events += [event(EventKind.DELEGATED, turn, GUARD, at, task=task) for task in tasks]
    update: dict[str, Any] = {
        "decision": {
            "turn": turn,
            "outcome": decision.outcome.value,
            "calls": calls,
            **({"tasks": tasks} if tasks else {}),
            **({"note": decision.note} if decision.note is not None else {}),
            "status": decision.status and decision.status.value,
            "summary": _summary(state),
        },
    }
    if tasks:
        update["delegated"] = [*state.get("delegated", ()), *(task["id"] for task in tasks)]
    if refusals:  # no write when there is none: each write is a checkpoint row
        update["refusals"] = refusals
        update["refused_choices"] = state.get("refused_choices", 0) + 1
    if decision.status:
        update["status"] = decision.status.value
    if decision.stop is not None:
        update["stop_text"] = decision.stop.text
        update["hypotheses"] = list(decision.hypotheses)
    interactions = asked(decision, calls, scope, turn, at, state["grant"])
    if decision.outcome == Outcome.ASKED:
        update["open_questions"] = [*state.get("open_questions", ()), *interactions]
        update["questions_asked"] = state.get("questions_asked", 0) + 1
        events += [
            event(EventKind.ASKED, turn, GUARD, at, interaction=interaction)
            for interaction in interactions
        ]
    elif interactions:
        update["pending"] = interactions
        events += [
            event(EventKind.INTERRUPTED, turn, GUARD, at, interaction=interaction)
            for interaction in interactions
        ]
        if decision.outcome == Outcome.ASK:
            update["questions_asked"] = state.get("questions_asked", 0) + 1
    update["events"] = events
    return update


def _summary(state: dict[str, Any]) -> str:
    """The proposal's summary, kept with a batch that waits for people and is re-decided later."""
    raw = state.get("proposal", {}).get("raw")
    if isinstance(raw, str):
        with contextlib.suppress(ValueError, RecursionError):
            raw = json.loads(raw)
    summary = raw.get("summary") if isinstance(raw, dict) else None
    return summary if isinstance(summary, str) and summary else "proposal"


WAITING = (Outcome.ASK, Outcome.APPROVAL, Outcome.AWAIT, Outcome.REMEMBER)
"""Outcomes whose batch waits for people."""


def execute_tasks(
    state: dict[str, Any], calls: list[dict[str, Any]], scope: str | None = None
) -> list[Send]:
    """One `execute` task per approved call, sealed for this run."""
    grant, decision = state["grant"], state["decision"]
    scope = run_scope() if scope is None else scope
    return [
        Send(
            "execute",
            sealed_payload(
                "execute",
                {
                    "call": {key: value for key, value in call.items() if key != "sources"},
                    "profile": grant["profile"],
                    "manifest": grant["manifest"],
                    "manifest_sha256": grant["manifest_sha256"],
                    "records": call["sources"],
                    "turn": decision["turn"],
                    "deadline_at": state["deadline_at"],
                    "call_s": grant["budget"].get("call_s", 30),
                    "hooks": grant.get("hooks", []),
                    "redact": grant.get("redact", []),
                },
                scope,
            ),
        )
        for call in calls
    ]
