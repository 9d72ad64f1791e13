"""The model chooser's two steps: assemble and record the request, then dispatch and record.

`prepare` (run by the choose node) records the exact request before dispatch; the `model` node sends
it and records the raw response, provider request id, model name and usage before anything parses
it. With `durability="sync"` each is durable before the next step, so after a crash a recorded
response is reused and the model is not asked again. Failed attempts (errors, truncation) are
recorded and retried, each a new attempt, after a short backoff; after the route's limit, or at once
for a failure another attempt cannot change, the run ends with `model_failed`. No attempt outlives
the deadline: each is cut to the time left, and once it has passed the model is not asked and the
guard, which owns the deadline, ends the run with `deadline_passed`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from tenacity import RetryCallState, Retrying, wait_exponential

from contract.codes import EventKind, Status
from contract.state import WarrantState
from contract.text import one_line
from guards.egress import Outbound
from guards.egress import recorded as recorded_outbound
from ledger.bodies import bodies, put_body
from ledger.context import WarrantContext, context_of, event, store_of
from ledger.integrity import run_scope
from ledger.record import RunRecord
from ledger.store import RecordMissing, cursor_of, left_at
from nodes.choosers.cassette import replay
from nodes.choosers.projector import CapabilityGap, assemble
from nodes.choosers.response_schema import response_schema
from nodes.choosers.route import Route
from nodes.choosers.transport import Reply, send
from nodes.choosers.view import ChooserView
from tools.catalog import tools_of

MODEL_KINDS = ("model", "replay")
ACTOR = "chooser:model"
MIN_ATTEMPT_S = 0.1
"""An attempt with less time than this before the deadline could not complete: it is not sent."""


def prepare(view: ChooserView, state: WarrantState, at: float, store: BaseStore) -> dict[str, Any]:
    """The choose node's update for a model turn: the recorded request, or the end of the run."""
    turn = view.turn
    if left_at(state, turn, at).end is not None:
        # The guard refuses this turn on its budget or deadline whatever is proposed: don't pay for it.
        return {"turn": turn, **not_asked(turn, at, "budget or deadline spent")}
    route = Route.model_validate(state["route"])
    try:
        questions = state.get("open_questions") or ()  # each a reminder of the request
        request = assemble(view, state["grant"], route, questions)
        key = assemble(_without_clock(view), state["grant"], route, questions).sha256
    except CapabilityGap as gap:  # the handover records the stop: no event here
        return {
            "turn": turn,
            "proposal": None,
            "status": Status.CAPABILITY_GAP.value,
            "stop_text": f"Capability gap: {gap}",
        }
    schema = _response_schema(view, state["grant"]) if route.dialect != "json_object" else None
    schema_digest = put_body(store, schema) if schema else None
    manifest = request.manifest | ({"response_schema": schema_digest} if schema else {})
    recorded = {
        "turn": turn,
        "sha256": request.sha256,
        "replay_key": key,
        "manifest": manifest,
        "body": put_body(store, request.text),
        "schema": schema_digest,
    }
    requested = event(
        EventKind.REQUESTED,
        turn,
        ACTOR,
        at,
        sha256=request.sha256,
        replay_key=key,
        manifest=manifest,
    )
    return {"turn": turn, "proposal": None, "request": recorded, "events": [requested]}


def _response_schema(view: ChooserView, grant: dict[str, Any]) -> dict[str, Any]:
    """The schema the server constrains its decoding with (a hint; the guard checks the reply)."""
    refs = [item["ref"] for item in view.evidence] + [note["ref"] for note in view.notes]
    shown = {entry["name"] for entry in view.catalog}  # a PDF tool only with a PDF spec
    specs = [spec for spec in tools_of(grant["profile"]).values() if spec.name in shown]
    return response_schema(
        specs,
        view.records,
        refs,
        view.delegation,
        view.turn,
        view.budget_left,
        view.has_memory,
        view.families,
    )


def _without_clock(view: ChooserView) -> ChooserView:
    """The view with the seconds left fixed: the request it yields is the same in a replay of the
    run (the real request quotes the seconds left, so its sha256 differs from run to run)."""
    return replace(view, budget_left={**view.budget_left, "seconds": 0.0})


def not_asked(turn: int, at: float, why: str) -> dict[str, Any]:
    """A turn the model is not asked for: the guard decides it on its budget or deadline."""
    proposal = {"turn": turn, "actor": ACTOR, "raw": None, "not_asked": why, "at": at}
    return {"proposal": proposal, "events": [event(EventKind.PROPOSED, turn, ACTOR, at, raw=None)]}


def model(state: WarrantState, runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    request, turn = state["request"], state["turn"]
    cursor = cursor_of(state)
    route = Route.model_validate(state["route"])
    context = context_of(runtime)
    clock, sleep = context.clock, context.sleep
    kind, _, cassette = state["chooser"].partition(":")
    waited = 0.0
    if kind == "replay":  # no network, so nothing to wait for
        lane = (state.get("child") or {}).get("lane", "")
        reply = replay(Path(cassette), cursor["model_calls"], turn, request.get("replay_key"), lane)
    else:
        store, scope = store_of(runtime), run_scope()
        recent = RunRecord(store, scope).model_calls(cursor, last=route.max_attempts)
        waited = wait_to_retry(recent, turn, route, state["deadline_at"], clock, sleep)
        left = state["deadline_at"] - clock()
        if left < MIN_ATTEMPT_S:
            sleep(max(0.0, left) + 0.001)  # to the deadline, so that the guard finds it passed
            return not_asked(turn, clock(), "the deadline has passed")
        text, schema = _request_of(store, scope, request)
        outbound = _as_gated(text, request)
        timeout_s = min(route.timeout_s, left)
        reply = send(route, outbound, timeout_s, schema, context.monotonic)
    return recorded(state, route, reply, clock(), waited)


def _as_gated(text: str, request: dict[str, Any]) -> Outbound:
    """The recorded request as the egress gate let it out at `prepare` (a request recorded with no
    gate's word is taken as gated for a local route only, so a remote route refuses it)."""
    gated = request.get("manifest", {}).get("egress") or {}
    locality: Literal["local", "remote"] = (
        "remote" if gated.get("locality") == "remote" else "local"
    )
    return recorded_outbound(text, locality, int(gated.get("withheld_spans") or 0))


def _request_of(
    store: BaseStore, scope: str, request: dict[str, Any]
) -> tuple[str, dict[str, Any] | None]:
    """The recorded request's text and response schema, exactly as they were recorded."""
    wanted = [request["body"], request.get("schema")]
    found = bodies(store, wanted)
    missing = [digest for digest in wanted if digest and digest not in found]
    if missing:
        raise RecordMissing(f"the store lacks the model request {missing[0]} of run {scope!r}")
    return found[request["body"]], found.get(request.get("schema") or "")


def recorded(
    state: WarrantState, route: Route, reply: Reply, at: float, waited: float
) -> dict[str, Any]:
    """The update for one attempt: the call recorded, then a proposal, a retry or the end."""
    request, turn = state["request"], state["turn"]
    attempt = cursor_of(state)["model_calls"] + 1
    call = {
        "turn": turn,
        "attempt": attempt,
        "request_sha256": request["sha256"],
        "request_body": request.get("body"),
        "response_schema": request.get("schema"),
        "replay_key": request.get("replay_key"),
        "locality": route.locality,
        "at": at,
        "waited_s": round(waited, 3),
        "reply": reply.to_dict(),
    }
    replied = event(
        EventKind.MODEL_REPLIED,
        turn,
        ACTOR,
        at,
        attempt=attempt,
        request_sha256=request["sha256"],
        error=reply.error,
        usage=reply.usage,
        model=reply.model,
        request_id=reply.request_id,
        waited_s=call["waited_s"],
    )
    if reply.error is None:
        proposed = event(EventKind.PROPOSED, turn, ACTOR, at, raw=reply.content)
        proposal = {"turn": turn, "actor": ACTOR, "raw": reply.content}
        return {"model_calls": [call], "proposal": proposal, "events": [replied, proposed]}
    failed = state.get("failed_attempts", 0) + 1
    update: dict[str, Any] = {"model_calls": [call], "failed_attempts": failed, "events": [replied]}
    if at >= state["deadline_at"]:  # the deadline cut this attempt: the guard ends the run
        ended = not_asked(turn, at, "the deadline has passed")
        return update | {"proposal": ended["proposal"], "events": [replied, *ended["events"]]}
    if not reply.retryable:
        return update | {
            "status": Status.MODEL_FAILED.value,
            "stop_text": f"Model attempt {attempt} failed and another cannot help: {one_line(reply.error, 300)}",
        }
    if route.gives_up_after(failed):
        return update | {
            "status": Status.MODEL_FAILED.value,
            "stop_text": f"The model failed {failed} attempt(s) in a row: {one_line(reply.error, 300)}",
        }
    return update


def retry_wait(
    calls: list[dict[str, Any]], turn: int, base: float, cap: float
) -> tuple[float, float | None]:
    """How long to wait before this turn's next attempt, and since when: none for a turn's first
    attempt; else `base` doubled per failed attempt of the turn, or the endpoint's `Retry-After`
    if longer, at most `cap`."""
    failed = 0
    for call in reversed(calls):
        if call["turn"] != turn or call["reply"].get("error") is None:
            break
        failed += 1
    if not failed:
        return 0.0, None
    after = calls[-1]["reply"].get("retry_after_s") or 0.0
    return min(cap, max(after, _backoff(failed, base, cap))), calls[-1].get("at")


def _backoff(failed: int, base: float, cap: float) -> float:
    """tenacity's exponential wait after `failed` attempts. Only its wait: the attempts are the
    graph's own steps, each recorded and durable, so tenacity's retry loop, which would hide them
    inside one step, is not used."""
    attempt = RetryCallState(retry_object=Retrying(), fn=None, args=(), kwargs={})
    attempt.attempt_number = failed
    return wait_exponential(multiplier=base, max=cap)(attempt)


def wait_to_retry(
    calls: list[dict[str, Any]],
    turn: int,
    route: Route,
    deadline_at: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None] = time.sleep,
) -> float:
    """Sleep before a retry (this node is sync; it holds no lock but the run's own lease), never
    past the deadline; time already spent since the failure (a resume) counts. Returns the wait.
    `sleep` goes with `clock` (`WarrantContext.sleep`): a fake clock's moves it."""
    wanted, since = retry_wait(calls, turn, route.backoff_s, route.backoff_max_s)
    start = clock()
    elapsed = start - since if since is not None else 0.0
    wait = max(0.0, min(wanted - elapsed, deadline_at - start))
    if wait:
        sleep(wait)
    return wait
