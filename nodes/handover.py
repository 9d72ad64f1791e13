"""The handover: evidence and unknowns for a person; never a root cause.

A chooser's stop text and hypotheses are shown as the chooser's statements, each citing existing
evidence; they are not findings, and the handover has no root-cause field.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import RunnableConfig
from langgraph.runtime import Runtime

from nodes.context import WarrantContext, event, now
from nodes.unknowns import NO_ROOT_CAUSE, unknowns_of

RUNTIME = "runtime"


def handover(
    state: dict[str, Any], config: RunnableConfig, runtime: Runtime[WarrantContext]
) -> dict[str, Any]:
    status = state.get("status") or "stopped"
    report = build_handover(
        {**state, "status": status}, config["configurable"].get("thread_id", "")
    )
    at, turn = now(runtime), state.get("turn", 0)
    events = [
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
    return {"status": status, "handover": report, "events": events}


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
        "evidence": state.get("evidence", []),
        "unknowns": unknowns_of(state),
        "refusals": state.get("refusals", []),
        "hypotheses": state.get("hypotheses", []),
        "chooser_stop_text": state.get("stop_text", ""),
    }
