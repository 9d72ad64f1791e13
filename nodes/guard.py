"""The guard node: the only way from a proposal to a tool. It asks `guards.decide` and records.

Approved calls fan out with `Send`, one task per call, each carrying its pre-assigned evidence ref
(refs follow call order, so a recovered run numbers its evidence exactly as an uninterrupted one).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from guards.decide import Decision, GuardContext, call_signature, decide
from nodes.context import WarrantContext, event, now
from tools.records import Scenario

GUARD = "guard"


def guard(state: dict[str, Any], runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    scenario = Scenario.model_validate(state["grant"])
    evidence = state.get("evidence", [])
    turn = state["turn"]
    at = now(runtime)
    context = GuardContext(
        scenario=scenario,
        turn=turn,
        now=at,
        deadline_at=state["deadline_at"],
        evidence_refs=frozenset(item["ref"] for item in evidence),
        executed={item["call_id"]: call_signature(item["tool"], item["args"]) for item in evidence},
        refused_choices=state.get("refused_choices", 0),
    )
    return record(decide(state["proposal"]["raw"], context), state, turn, at)


def record(decision: Decision, state: dict[str, Any], turn: int, at: float) -> dict[str, Any]:
    """The state update and ledger entries for one decision."""
    first_ref = len(state.get("evidence", [])) + 1
    calls = [
        {
            "id": call.id,
            "name": call.name,
            "args": call.args,
            "records": call.records,
            "ref": f"E{first_ref + index}",
        }
        for index, call in enumerate(decision.calls)
    ]
    refusals = [{"turn": turn, **refusal.to_dict()} for refusal in decision.refusals]
    events = [
        event("refused", turn, GUARD, at, **refusal.to_dict()) for refusal in decision.refusals
    ]
    events += [event("approved", turn, GUARD, at, call=call) for call in calls]
    update: dict[str, Any] = {
        "decision": {
            "turn": turn,
            "outcome": decision.outcome,
            "calls": calls,
            "status": decision.status,
        },
        "refusals": refusals,
        "events": events,
    }
    if refusals:
        update["refused_choices"] = state.get("refused_choices", 0) + 1
    if decision.status:
        update["status"] = decision.status
    if decision.stop is not None:
        update["stop_text"] = decision.stop.text
        update["hypotheses"] = [hypothesis.model_dump() for hypothesis in decision.stop.hypotheses]
    return update


def route_after_guard(state: dict[str, Any]) -> list[Send] | Literal["choose", "handover"]:
    """Approved calls → one `execute` task each; refused → choose again; stop or end → handover."""
    decision = state["decision"]
    if decision["outcome"] == "execute":
        grant = state["grant"]
        return [
            Send("execute", {
                "call": call,
                "profile": grant["profile"],
                "records": {field: grant["records"][record_id] for field, record_id in call["records"].items()},
                "turn": decision["turn"],
            })
            for call in decision["calls"]
        ]  # fmt: skip
    if decision["outcome"] == "refused":
        return "choose"
    return "handover"
