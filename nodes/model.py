"""The model chooser's two steps: assemble and record the request, then dispatch and record.

`prepare` (run by the choose node) records the exact request before dispatch; the `model` node sends
it and records the raw response, provider request id, model name and usage before anything parses
it. With `durability="sync"` each is durable before the next step, so after a crash a recorded
response is reused and the model is not asked again. Failed attempts (errors, truncation) are
recorded and retried, each a new attempt; after the route's limit the run ends with `model_failed`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime

from nodes.context import WarrantContext, event, now
from nodes.projector import CapabilityGap, assemble
from nodes.route import Route
from nodes.transport import replay, send

MODEL_KINDS = ("model", "replay")
ACTOR = "chooser:model"


def prepare(view: Any, state: dict[str, Any], at: float) -> dict[str, Any]:
    """The choose node's update for a model turn: the recorded request, or the end of the run."""
    turn = view.turn
    budget = state["grant"]["budget"]
    if turn > budget["steps"] or at >= state["deadline_at"]:
        # The guard refuses this turn on its budget or deadline whatever is proposed: don't pay for it.
        proposal = {
            "turn": turn,
            "actor": ACTOR,
            "raw": None,
            "not_asked": "budget or deadline spent",
        }
        return {
            "turn": turn,
            "proposal": proposal,
            "events": [event("proposed", turn, ACTOR, at, raw=None)],
        }
    route = Route.model_validate(state["route"])
    try:
        request = assemble(view, state["grant"], route)
    except CapabilityGap as gap:
        return {"turn": turn, "proposal": None, "status": "capability_gap", "stop_text": f"Capability gap: {gap}",
                "events": [event("stopped", turn, ACTOR, at, status="capability_gap", text=str(gap))]}  # fmt: skip
    recorded = {
        "turn": turn,
        "sha256": request.sha256,
        "manifest": request.manifest,
        "text": request.text,
    }
    requested = event(
        "requested", turn, ACTOR, at, sha256=request.sha256, manifest=request.manifest
    )
    return {"turn": turn, "proposal": None, "request": recorded, "events": [requested]}


def model(state: dict[str, Any], runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    request, turn = state["request"], state["turn"]
    attempt = len(state.get("model_calls", []))
    route = Route.model_validate(state["route"])
    kind, _, cassette = state["chooser"].partition(":")
    reply = replay(Path(cassette), attempt) if kind == "replay" else send(route, request["text"])
    at = now(runtime)
    call = {
        "turn": turn,
        "attempt": attempt + 1,
        "request_sha256": request["sha256"],
        "reply": reply.to_dict(),
    }
    replied = event("model_replied", turn, ACTOR, at, attempt=attempt + 1, request_sha256=request["sha256"],
                    error=reply.error, usage=reply.usage, model=reply.model, request_id=reply.request_id)  # fmt: skip
    if reply.error is not None:
        failed = state.get("failed_attempts", 0) + 1
        update: dict[str, Any] = {
            "model_calls": [call],
            "failed_attempts": failed,
            "events": [replied],
        }
        if failed >= route.max_attempts:
            update |= {
                "status": "model_failed",
                "stop_text": f"The model failed {failed} attempt(s) in a row: {reply.error}",
            }
        return update
    proposal = {"turn": turn, "actor": ACTOR, "raw": reply.content}
    return {
        "model_calls": [call],
        "proposal": proposal,
        "events": [replied, event("proposed", turn, ACTOR, at, raw=reply.content)],
    }


def route_after_choose(state: dict[str, Any]) -> Literal["model", "guard", "handover"]:
    if state.get("status") == "capability_gap":
        return "handover"
    return "model" if state.get("proposal") is None else "guard"


def route_after_model(state: dict[str, Any]) -> Literal["model", "guard", "handover"]:
    if state.get("status") == "model_failed":
        return "handover"
    return "model" if state.get("proposal") is None else "guard"
