"""The guard node: the only way from a proposal to a tool. It asks `guards` and records.

Approved calls fan out with `Send`, one task per call, each carrying its pre-assigned evidence ref
(refs follow call order, so a recovered run numbers its evidence exactly as an uninterrupted one).
A question, a call that needs a person or a note proposed for memory becomes a pending interaction
(`nodes.asked`), written here — before the human node's `interrupt()` — so that nothing is
recorded twice when that node re-runs on resume. An approved recall is a look into memory, not a
tool: its notes are found here and recorded as M1, M2, … (`nodes.recall`). People's input — a
stop, corrections, answers to open questions, the replies to what waited for them
(`nodes.replies`) — is taken in around this decision by `nodes.intake`, the step the graph runs as
`guard`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from langgraph.store.base import BaseStore

from contract.codes import EventKind, Outcome, Owner, Status
from contract.shapes import Event, RecordedCall
from contract.state import WarrantState
from guards.action import proposal_summary
from guards.budget import Refs, Spent
from guards.checks import ParsedProposal, parse_proposal
from guards.decide import GuardContext, decide
from guards.decision import (
    Approved,
    Ask,
    Decision,
    Delegate,
    End,
    NeedsApproval,
    Recall,
    Refused,
    Remember,
    Stop,
    recorded_decision,
    refusals_of,
)
from guards.hooks import scenario_hooks
from guards.refusals import RefusalCode
from ledger.context import event
from ledger.members import scenario_of
from ledger.store import cursor_of
from nodes.asked import asked
from nodes.choosers.route import Route
from nodes.model import ACTOR as MODEL_ACTOR
from nodes.recall import recall_update
from nodes.receipts import LedgerReceipts


def guard(state: WarrantState, store: BaseStore, scope: str, at: float) -> dict[str, Any]:
    """The proposal decided and recorded. People's input (a stop, corrections, answers, replies
    to what waited for them) is taken in by `nodes.intake` around this, never here."""
    # A turn the runtime did not ask the model for (its budget or deadline spent) is decided at the
    # time it was found spent, should this node's clock read earlier (a clock stepped back).
    decided_at = max(at, (state.get("proposal") or {}).get("at", at))
    parsed = parsed_for(state["proposal"]["raw"], state["grant"])
    ctx = context_for(state, store, scope, decided_at, parsed)
    decision, attempts = _count_model_failures(decide(parsed, ctx), state)
    update = record(decision, state, scope, at) | attempts
    if isinstance(decision, Recall):
        found = recall_update(store, state, scope, list(decision.recalls), at)
        update |= {**found, "events": [*update["events"], *found.get("events", ())]}
    return update


def parsed_for(raw: object, grant: Mapping[str, Any]) -> ParsedProposal:
    """A proposal parsed once, against the grant's profile and its admitted MCP tools' pinned
    schemas: what the guard decides and what its receipts are read for."""
    tools: Mapping[str, Any] = grant.get("mcp_tools") or {}
    schemas = {name: tool["input_schema"] for name, tool in tools.items()}
    return parse_proposal(raw, grant["profile"], schemas)


def _count_model_failures(
    decision: Decision, state: WarrantState
) -> tuple[Decision, dict[str, Any]]:
    """Malformed model output is a failed attempt; enough of them in a row end the run."""
    proposal = state["proposal"]
    if proposal.get("actor") != MODEL_ACTOR or proposal.get("raw") is None:
        return decision, {}
    refusals = refusals_of(decision)
    if not any(refusal.code is RefusalCode.MALFORMED_ACTION for refusal in refusals):
        return decision, {"failed_attempts": 0}
    failed: int = state.get("failed_attempts", 0) + 1
    if isinstance(decision, Refused) and Route.model_validate(state["route"]).gives_up_after(
        failed
    ):
        return End(Status.MODEL_FAILED, refusals), {"failed_attempts": failed}
    return decision, {"failed_attempts": failed}


def context_for(
    state: WarrantState,
    store: BaseStore,
    scope: str,
    at: float,
    proposal: ParsedProposal,
    person_approved: frozenset[str] = frozenset(),
) -> GuardContext:
    """What the guard knows when it decides `proposal`: the run's receipts are read from its
    ledger in one batch for what the proposal names (`nodes.receipts`)."""
    cursor = cursor_of(state)
    surface, spent = shown_tools(state), spent_of(state, cursor)
    scenario = scenario_of(state["grant"], store)
    return GuardContext(
        scenario=scenario,
        now=at,
        spent=spent,
        receipts=LedgerReceipts(store, scope, cursor, proposal),
        person_approved=person_approved,
        hooks=scenario_hooks(scenario),
        depth=state.get("depth", 0),
        delegated=frozenset(state.get("delegated", ())),
        recalled_queries=frozenset(state.get("recalls", ())),
        local_read=frozenset(cursor.get("local_read", ())),
        surface=surface,
    )


def spent_of(state: WarrantState, cursor: Mapping[str, Any]) -> Spent:
    """What the run (and its children, handed off) spent by this proposal."""
    return Spent(
        turn=state["turn"],
        deadline_at=state["deadline_at"],
        evidence_refs=Refs(cursor["observations"], cursor["answers"], cursor["notes"]),
        questions_asked=state.get("questions_asked", 0),
        refused_choices=state.get("refused_choices", 0),
        child_turns=cursor["child_turns"],
        child_questions=cursor["child_questions"],
    )


def shown_tools(state: WarrantState) -> frozenset[str] | None:
    """The tools the model's request for this proposal showed (A34: a tool admitted but dropped
    from what was dispatched is not called); None for a proposal no request of this run produced."""
    proposal, request = state.get("proposal") or {}, state.get("request") or {}
    tools = (request.get("manifest") or {}).get("tools")
    if (
        proposal.get("actor") != MODEL_ACTOR
        or request.get("turn") != proposal.get("turn")
        or not tools
    ):
        return None
    return frozenset(tools["names"])


@dataclass(frozen=True)
class _Added:
    """What an outcome adds to the state update, after the decision and its refusals."""

    update: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)


def record(decision: Decision, state: WarrantState, scope: str, at: float) -> dict[str, Any]:
    """The state update and ledger entries for one decision: the decision as recorded
    (`guards.decision.recorded_decision`), its refusals, then what its outcome adds."""
    turn = state["turn"]
    first_ref = cursor_of(state)["observations"] + 1
    summary = proposal_summary(state.get("proposal", {}).get("raw"))
    refusals = refusals_of(decision)
    as_recorded = recorded_decision(decision, turn, first_ref, summary)
    match decision:
        case Approved():
            added = _approved(as_recorded["calls"], turn, at)
        case NeedsApproval() | Remember():
            added = _waiting(decision, state, scope, at)
        case Ask():
            added = _question(decision, state, scope, at)
        case Delegate():
            added = _delegated(as_recorded["tasks"], state, at)
        case Stop():
            added = _Added(
                {"stop_text": decision.stop.text, "hypotheses": list(decision.hypotheses)}
            )
        case End() | Refused() | Recall():
            added = _Added()
        case _:
            assert_never(decision)
    update: dict[str, Any] = {"decision": as_recorded}
    if refusals:  # no write when there is none: each write is a checkpoint row
        update["refusals"] = [{"turn": turn, **refusal.to_dict()} for refusal in refusals]
        update["refused_choices"] = state.get("refused_choices", 0) + 1
    if as_recorded["status"]:
        update["status"] = as_recorded["status"]
    refused = [
        event(EventKind.REFUSED, turn, Owner.GUARD, at, **refusal.to_dict()) for refusal in refusals
    ]
    return update | added.update | {"events": [*refused, *added.events]}


def _approved(calls: list[RecordedCall], turn: int, at: float) -> _Added:
    """An approved batch: `approved` for each call, then `executing` for each, committed before
    any call runs (a call with `executing` and no `executed` may have run)."""
    approved = [
        event(
            EventKind.APPROVED,
            turn,
            Owner.GUARD,
            at,
            call={key: value for key, value in call.items() if key != "sources"},
        )
        for call in calls
    ]
    executing = [
        event(
            EventKind.EXECUTING,
            turn,
            Owner.GUARD,
            at,
            call_id=call["id"],
            ref=call["ref"],
            tool=call["name"],
        )
        for call in calls
    ]
    return _Added(events=[*approved, *executing])


def _delegated(tasks: list[dict[str, Any]], state: WarrantState, at: float) -> _Added:
    """Child investigations started: their task ids are used, one `delegated` event each."""
    delegated = [*state.get("delegated", ()), *(task["id"] for task in tasks)]
    events = [
        event(EventKind.DELEGATED, state["turn"], Owner.GUARD, at, task=task) for task in tasks
    ]
    return _Added({"delegated": delegated}, events)


def _question(decision: Ask, state: WarrantState, scope: str, at: float) -> _Added:
    """A question counts against the budget; one the run waits for is pending, one it does not
    wait for is open (`nodes.questions` adopts its answer when it comes)."""
    if decision.blocking:
        waiting = _waiting(decision, state, scope, at)
        return replace(waiting, update=waiting.update | _one_more_question(state))
    turn = state["turn"]
    interactions = asked(decision, scope, turn, at, state["grant"])
    return _Added(
        {
            "open_questions": [*state.get("open_questions", ()), *interactions],
            **_one_more_question(state),
        },
        [event(EventKind.ASKED, turn, Owner.GUARD, at, interaction=i) for i in interactions],
    )


def _one_more_question(state: WarrantState) -> dict[str, Any]:
    return {"questions_asked": state.get("questions_asked", 0) + 1}


def _waiting(
    decision: Ask | NeedsApproval | Remember, state: WarrantState, scope: str, at: float
) -> _Added:
    """Interactions for people, pending: the human node interrupts once for each."""
    turn = state["turn"]
    interactions = asked(decision, scope, turn, at, state["grant"])
    if not interactions:
        return _Added()
    return _Added(
        {"pending": interactions},
        [event(EventKind.INTERRUPTED, turn, Owner.GUARD, at, interaction=i) for i in interactions],
    )


WAITING = (Outcome.ASK, Outcome.APPROVAL, Outcome.AWAIT, Outcome.REMEMBER)
"""Outcomes whose batch waits for people."""
