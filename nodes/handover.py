"""The handover: evidence and unknowns for a person; never a root cause.

A chooser's stop text and hypotheses are shown as the chooser's statements, each citing existing
evidence; they are not findings, and the handover has no root-cause field.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import RunnableConfig
from langgraph.runtime import Runtime

from guards.refusals import RUNTIME
from guards.seal import SEAL
from nodes.context import WarrantContext, event, now
from nodes.integrity import (
    TAMPERED,
    out_of_step,
    tampering,
    trusted,
    trusted_turn,
    unsealed_fields,
)
from nodes.unknowns import NO_ROOT_CAUSE, unknowns_of


def handover(
    state: dict[str, Any], config: RunnableConfig, runtime: Runtime[WarrantContext]
) -> dict[str, Any]:
    thread = str(config["configurable"].get("thread_id", ""))
    at, turn = now(runtime), trusted_turn(state, thread)
    found = unsealed_fields(state, thread) or out_of_step(state)
    recorded = tampering("handover", found, turn, at) if found and not state.get("tampered") else {}
    if found or state.get("tampered"):
        state = {**trusted_view(state, thread), "turn": turn}
        state["refusals"] = [*state.get("refusals", []), *recorded.get("refusals", [])]
        status = TAMPERED
    else:
        status = state.get("status") or "stopped"
    report = build_handover({**state, "status": status}, thread)
    events = [
        *recorded.get("events", []),
        event("stopped", turn, RUNTIME, at, status=status, text=state.get("stop_text", "")),
        event(
            "handover",
            turn,
            RUNTIME,
            at,
            evidence=len(report["evidence"]),
            refusals=len(report["refusals"]),
        ),
    ]
    return {**recorded, "status": status, "handover": report, "events": events}


def trusted_view(state: dict[str, Any], thread: str) -> dict[str, Any]:
    """Only what the run wrote itself; the grant and goal, if their fields were replaced, as the
    sealed ledger recorded them at admission."""
    kept = trusted(state, thread)
    admitted = next(
        (item["payload"] for item in kept.get("events", []) if item["type"] == "admitted"), {}
    )
    kept.setdefault("goal", admitted.get("goal", ""))
    kept.setdefault("grant", {
        "id": admitted.get("scenario", "?"),
        "profile": admitted.get("profile"),
        "budget": admitted.get("budget", {}),
        "records": {record["id"]: record for record in admitted.get("records", [])},
    })  # fmt: skip
    return kept


def unsealed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items as a report shows them: their seals are the run's bookkeeping, and the handover
    itself is sealed whole."""
    return [{key: value for key, value in item.items() if key != SEAL} for item in items]


def build_handover(state: dict[str, Any], thread_id: str) -> dict[str, Any]:
    """The handover document (DESIGN §6) from a run's state; pure."""
    grant = state["grant"]
    return {
        "thread_id": thread_id,
        "scenario": grant["id"],
        "goal": state["goal"],
        "status": state["status"],
        "turns": state.get("turn", 0),
        "budget": grant["budget"],
        "statement": NO_ROOT_CAUSE,
        "evidence": unsealed(state.get("evidence", [])),
        "unknowns": unknowns_of(state),
        "refusals": unsealed(state.get("refusals", [])),
        "hypotheses": state.get("hypotheses", []),
        "chooser_stop_text": state.get("stop_text", ""),
    }
