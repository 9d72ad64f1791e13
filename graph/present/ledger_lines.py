"""A ledger entry or a pending interaction said in one line of plain text: what a person reads in
`warrant log`, a run's page and the waiting list.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from contract.codes import EventKind, InteractionKind


def ledger_line(event: Mapping[str, Any]) -> str:
    """One line describing a ledger entry's payload, as plain text (`render.event_summary`
    escapes it)."""
    payload = event["payload"]
    kind = event["type"]
    if kind == EventKind.ADMITTED:
        entered = payload.get("entry") or {}
        via = f" · by warrant ask: {entered['route']}, {entered['reason']}" if entered else ""
        if overridden := (payload.get("route_admission") or {}).get("override"):
            via += f" · route not admitted by an evaluation, run anyway: {overridden}"
        return f"{payload['scenario']} · {len(payload['records'])} records · chooser {payload['chooser']}{via}"
    if kind == EventKind.ENTERED:
        return f"{payload['route']}: {payload['reason']}"
    if kind == EventKind.PROPOSED:
        return _proposal_summary(payload["raw"])
    if kind == EventKind.APPROVED:
        call = payload["call"]
        return f"{call['id']} {call['name']} → {call['ref']}"
    if kind == EventKind.REFUSED:
        return f"{payload['code']} ({payload['owner']}): {payload['detail']}"
    if kind == EventKind.EXECUTING:
        return f"{payload['call_id']} {payload['tool']} → {payload['ref']} · dispatched"
    if kind == EventKind.EXECUTED:
        again = (
            f" · attempt {payload['attempt']}: may have run before"
            if payload.get("attempt", 1) > 1
            else ""
        )
        return f"{payload['call_id']} → {payload['ref']} · {payload['record']} · {payload['outcome']}{again}"
    if kind == EventKind.REQUESTED:
        manifest = payload["manifest"]
        used = sum(section["tokens"] for section in manifest["sections"])
        omitted = ", ".join(item["ref"] for item in manifest["omitted"]) or "none"
        return f"sha256 {payload['sha256'][:12]}… · {len(manifest['sections'])} sections · ~{used}/{manifest['budget_tokens']} tokens · omitted: {omitted}"
    if kind == EventKind.MODEL_REPLIED:
        total = (payload["usage"] or {}).get("total_tokens")
        spent = f"{total} tokens" if total is not None else "usage unknown"
        outcome = (
            f"error: {payload['error']}" if payload["error"] else f"{payload['model']} · {spent}"
        )
        return f"attempt {payload['attempt']} · {outcome}"
    if kind in (EventKind.INTERRUPTED, EventKind.ASKED):
        interaction = payload["interaction"]
        going_on = " · the run goes on" if kind == EventKind.ASKED else ""
        return f"{interaction['interaction_id']} · {interaction_summary(interaction)}{going_on}"
    if kind in (EventKind.RESUMED, EventKind.REPLIED):
        reply = payload["reply"]
        said = reply.get("answer") or reply.get("decision")
        by = f" · by {reply['by']}" if reply.get("by") else ""
        return f"{payload['interaction_id']} · {str(said)[:100]}{by}"
    if kind == EventKind.RECALLED:
        found = (
            ", ".join(
                f"{note['ref']} {note['note']} v{note['version']}" for note in payload["found"]
            )
            or "no notes"
        )
        return f"{payload['call_id']} recall {payload['query'][:80]!r} → {found}"
    if kind == EventKind.REMEMBERED:
        return f"{payload['interaction_id']} → note {payload['note']} v{payload['version']} saved in {payload['project']} · by {payload['by']}"
    if kind == EventKind.ADOPTED:
        return f"{payload['interaction_id']} → {payload['ref']}"
    if kind == EventKind.UNPARKED:
        moved = datetime.fromtimestamp(payload["deadline_at"], UTC).isoformat(timespec="seconds")
        return f"waited {payload['parked_s']:.0f} s for people · work deadline now {moved}"
    if kind == EventKind.EXPIRED:
        if payload.get("withdrawn"):
            return f"{payload['interaction_id']} · withdrawn: the run was stopped"
        return f"{payload['interaction_id']} · replied after its reply time; not used"
    if kind == EventKind.STOP_REQUESTED:
        why = f": {payload['reason']}" if payload.get("reason") else ""
        return f"stopped by a person{why}"
    if kind == EventKind.DELEGATED:
        task = payload["task"]
        budget = task["budget"]
        return f"{task['id']} · {len(task['records'])} record(s) · {budget['steps']} steps, {budget['evidence']} evidence · {task['goal'][:100]}"
    if kind == EventKind.HANDED_OFF:
        spent = payload["spent"]
        return f"{payload['lane']} · {payload['status']} · {payload['evidence']} evidence item(s) · {spent['steps']} step(s) spent"
    if kind == EventKind.HANDOVER:
        return f"{payload['evidence']} evidence item(s), {payload['refusals']} refusal(s)"
    if kind == EventKind.STOPPED:
        ended = payload.get("ending") or payload["status"]  # the status alone: an event from before
        return f"{ended}" + (f" · {payload['text']}" if payload.get("text") else "")
    return json.dumps(payload, ensure_ascii=False)[:160]


def _proposal_summary(raw: Any) -> str:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return f"text: {raw[:120]!r}"
    if not isinstance(raw, dict):
        return repr(raw)[:120]
    calls = raw.get("tool_calls")
    if isinstance(calls, list):
        names = [str(call.get("name")) if isinstance(call, dict) else "?" for call in calls]
        return f"{', '.join(names)} · {str(raw.get('summary', ''))[:100]}"
    message = raw.get("message")
    kind = message.get("kind") if isinstance(message, dict) else None
    return f"message {kind} · {str(raw.get('summary', ''))[:100]}"


def interaction_summary(interaction: Mapping[str, Any]) -> str:
    if interaction["kind"] == InteractionKind.QUESTION:
        return f"question: {interaction['question']}"
    call = interaction["call"]
    if interaction["kind"] == InteractionKind.REMEMBER:
        note = call["args"]
        resting = f" (resting on {', '.join(note['refs'])})" if note.get("refs") else ""
        return f"save this note to memory? “{note['text']}”{resting}"
    args = json.dumps(call["args"], ensure_ascii=False)
    return (
        f"approve call {call['id']} {call['name']}({args}) on {', '.join(interaction['records'])}?"
    )
