"""Where a run's evidence went on its way to the handover (stored, sent to the model, cited; the
first loss), and which reminders each model request delivered (`warrant trace`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contract.codes import EventKind
from guards.citations import base_ref


@dataclass(frozen=True)
class Flow:
    """One evidence item on its way to the handover."""

    ref: str
    turn: int
    stored: bool
    sent: str
    """`in full`, `by reference (<reason>)`, `never` (no model request after it), or `not a model
    run` (a script or file chooser sees every item whole)."""
    cited: bool
    person: bool = False
    """A person's answer (an `H` ref, kind `human_answer`): it has no receipt by nature, and
    lacking one is no loss."""


def evidence_flow(handover: Mapping[str, Any], ledger: Sequence[Mapping[str, Any]]) -> list[Flow]:
    """For each evidence item of the main lane: stored, sent to the model, cited."""
    requests = [e for e in ledger if e["type"] == EventKind.REQUESTED and not e.get("lane")]
    cited = {
        base_ref(ref)
        for hypothesis in handover.get("hypotheses") or ()
        for ref in hypothesis.get("refs", ())
    }
    flows = []
    for item in handover.get("evidence") or ():
        turn = item.get("turn", 0)
        later = [e for e in requests if e["turn"] > turn]
        person = item["ref"].startswith("H") or item.get("kind") == "human_answer"
        flows.append(
            Flow(
                item["ref"],
                turn,
                bool(item.get("sha256")),
                _sent(item["ref"], later, bool(requests)),
                item["ref"] in cited,
                person,
            )
        )
    return flows


def _sent(ref: str, later: Sequence[Mapping[str, Any]], model_run: bool) -> str:
    if not model_run:
        return "not a model run"
    if not later:
        return "never"
    reasons = []
    for request in later:
        omitted = {o["ref"]: o["reason"] for o in request["payload"]["manifest"].get("omitted", ())}
        if ref not in omitted:
            return "in full"
        reasons.append(omitted[ref])
    return f"by reference ({reasons[-1]})"


def first_loss(flows: Sequence[Flow]) -> str | None:
    """The first hand-off where evidence was lost, in one line, or None."""
    for flow in flows:
        if not flow.stored and not flow.person:
            return f"{flow.ref} (turn {flow.turn}) has no stored receipt"
        if flow.sent not in ("in full", "not a model run"):
            return f"{flow.ref} (turn {flow.turn}) was stored but never sent to the model in full: {flow.sent}"
    for flow in flows:
        if not flow.cited:
            return f"{flow.ref} (turn {flow.turn}) reached the chooser but no hypothesis cites it"
    return None


@dataclass(frozen=True)
class ReminderFlow:
    """One model request's reminders: those it carried, delivered only once the model answered
    it (seed 001 §05: a reminder counts when it reached the model), and those left out, with why."""

    lane: str
    turn: int
    request_sha256: str
    answered: bool
    """An attempt with this request got the model's reply (not an error)."""
    delivered: list[str]
    carried: list[str] | None
    """The reminders in the request; None for a request recorded before reminders were listed."""
    dropped: list[dict[str, str]]
    """Each left out: its id and why (context sizing, over the count limit)."""


def reminder_flow(ledger: Sequence[Mapping[str, Any]]) -> list[ReminderFlow]:
    """For each model request of the run and its children, in ledger order: its reminders."""
    answered = {
        (event.get("lane") or "", event["payload"].get("request_sha256"))
        for event in ledger
        if event["type"] == EventKind.MODEL_REPLIED and event["payload"].get("error") is None
    }
    flows = []
    for event in ledger:
        if event["type"] != EventKind.REQUESTED:
            continue
        payload, lane = event["payload"], event.get("lane") or ""
        manifest = payload.get("manifest") or {}
        listed = manifest.get("reminders_delivered")
        carried = None if listed is None else [reminder["id"] for reminder in listed]
        sent = (lane, payload.get("sha256")) in answered
        flows.append(
            ReminderFlow(
                lane,
                event["turn"],
                str(payload.get("sha256", "")),
                sent,
                list(carried or ()) if sent else [],
                carried,
                [dict(item) for item in manifest.get("reminders_dropped", ())],
            )
        )
    return flows


def reminder_line(flow: ReminderFlow) -> str:
    """One request's reminders in one line: delivered, then dropped with why."""
    where = f"{flow.lane} turn {flow.turn}" if flow.lane else f"turn {flow.turn}"
    if flow.carried is None:
        delivered = "not recorded (a request from before reminders were listed)"
    elif flow.answered:
        delivered = ", ".join(flow.delivered) or "none"
    else:
        carried = ", ".join(flow.carried) or "none"
        delivered = f"none: the model never answered this request (it carried {carried})"
    dropped = ", ".join(f"{item['id']} ({item['reason']})" for item in flow.dropped) or "none"
    return f"{where} · delivered: {delivered} · dropped: {dropped}"
