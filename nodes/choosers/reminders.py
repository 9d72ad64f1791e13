"""Reminders: lines of guidance for the model only (seed 001 §05), ranked, of which a request
carries at most `MAX_REMINDERS`: budget and deadline pressure, each open question, the turn's line,
and under pressure each approved record not read yet. Nothing reads them back; the projector
(`projector.py`) places them in its `reminders` section and records which it sent and dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guards.egress import local_records
from nodes.choosers.route import Route
from nodes.choosers.view import ChooserView
from nodes.evidence import family_members

MAX_REMINDERS = 8
"""Reminder lines a request carries at most; those ranked lower are dropped, and listed."""
MAX_REMINDER_CHARS = 200
LOW_SHARE = 0.25
"""Steps, evidence or seconds left at or below this share of the scenario's budget are pressure."""
CONTEXT_SIZING = "context sizing"
OVER_THE_LIMIT = f"over the count limit of {MAX_REMINDERS}"


@dataclass(frozen=True)
class Reminder:
    """One line of guidance: `id` is stable across turns (`budget`, `unexamined:<record id>`)."""

    id: str
    line: str


def reminders_for(
    view: ChooserView,
    grant: Mapping[str, Any],
    route: Route,
    questions: Sequence[Mapping[str, Any]] = (),
) -> list[Reminder]:
    """The reminders this turn calls for, highest rank first: budget and deadline pressure, each
    open question, the turn's line (what was the whole section before there were others), and,
    under pressure only, each approved record not read yet (else the unknowns say so already)."""
    left, budget = view.budget_left, grant.get("budget") or {}
    pressure = [
        Reminder(kind, line)
        for kind, line in (
            ("budget", _budget_line(left, budget)),
            ("deadline", _deadline_line(left, budget)),
        )
        if line
    ]
    found = [*pressure, *(_question(question) for question in questions)]
    found.append(Reminder("turn", _turn_line(view)))
    if pressure:
        found += _unexamined(view, grant, route)
    return [Reminder(r.id, bounded(r.line)) for r in found]


def _low(total: float) -> int:
    """How little left is pressure: a quarter of `total`, at least 1."""
    return max(1, math.ceil(total * LOW_SHARE))


def _budget_line(left: Mapping[str, float], budget: Mapping[str, Any]) -> str | None:
    steps, evidence = int(left["steps"]), int(left["evidence"])
    said = []
    if steps <= _low(budget.get("steps", 0)):
        said.append(
            "this is the last turn: stop now, citing the evidence gathered"
            if steps <= 1
            else f"{steps} turns left including this one: leave one to stop with cited evidence"
        )
    if evidence <= _low(budget.get("evidence", 0)):
        said.append(
            "no evidence left to gather: a tool call would be refused"
            if evidence <= 0
            else f"{evidence} evidence item(s) left to gather: choose the read that matters most"
        )
    return f"Budget low: {'; '.join(said)}." if said else None


def _deadline_line(left: Mapping[str, float], budget: Mapping[str, Any]) -> str | None:
    """None with no seconds left: no request is made then, and the replay key, which leaves the
    clock out (seconds 0), is the same whatever the time."""
    seconds = left["seconds"]
    if not 0 < seconds <= _low(budget.get("deadline_s", 0)):
        return None
    return f"Deadline near: about {int(seconds)} s left; a turn that starts after it is refused."


def _question(question: Mapping[str, Any]) -> Reminder:
    """An open question, by id and turn only: its text is in the unknowns."""
    iid = str(question.get("interaction_id", ""))
    return Reminder(
        f"question:{iid}",
        f"Your question {iid} of turn {question.get('turn', '?')} is still open; an answer, if one"
        " comes, arrives as an H ref: go on meanwhile.",
    )


def _turn_line(view: ChooserView) -> str:
    left = view.budget_left
    return (
        f"Turn {view.turn}. Left: {left['steps']} turn(s) including this one, {left['evidence']} evidence "
        f"item(s), {int(left['seconds'])} s. Reply with one JSON action document."
    )


def _unexamined(view: ChooserView, grant: Mapping[str, Any], route: Route) -> list[Reminder]:
    """The listed approved records no evidence was read from: ids and kinds, as the grant shows
    them to any route; a local one says the model would get a reference only."""
    read = {source.get("record") for item in view.evidence for source in item.get("sources", ())}
    read |= {
        member
        for item in view.evidence
        if (family := item.get("family"))
        for member in family_members(family, grant)
    }
    local = local_records(grant["records"], route.locality)
    return [
        Reminder(
            f"unexamined:{record['id']}",
            f"Approved {record['kind']} record {record['id']} has not been read"
            + (
                " (share = local: you would get a reference, not its text)."
                if record["id"] in local
                else "."
            ),
        )
        for record in view.records
        if record["id"] not in read
    ]


def bounded(line: str) -> str:
    """One line, at most `MAX_REMINDER_CHARS`."""
    line = " ".join(line.split())
    return line if len(line) <= MAX_REMINDER_CHARS else line[: MAX_REMINDER_CHARS - 1] + "…"
