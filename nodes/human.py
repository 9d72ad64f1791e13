"""The human node: one task per pending interaction, each waiting on a LangGraph interrupt.

Nothing is recorded before `interrupt()`: on resume LangGraph runs this node again from its top,
so the interaction itself was written by the guard beforehand. The reply must name the interaction
it answers; a reply naming another one (or malformed) is refused and the interaction stays pending.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt

from contract.codes import EventKind
from guards.human import check_reply
from guards.refusals import Refusal, bounded
from nodes.context import WarrantContext, event, now
from nodes.integrity import run_scope, sealed_payload

PERSON = "human"
EXPIRED = {"expired": True}
"""The reply recorded for an interaction whose reply time passed."""


def human(task: dict[str, Any], runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    interaction = task["interaction"]
    reply = interrupt(interaction)
    checked = check_reply(interaction, reply)
    turn, at = interaction["turn"], now(runtime)
    if at > interaction.get("reply_by", at):  # too late: the reply is kept as data, not used
        iid = interaction["interaction_id"]
        late = event(
            EventKind.EXPIRED, turn, PERSON, at, interaction_id=iid, late_reply=bounded(reply)
        )
        return {"replies": {iid: EXPIRED}, "events": [late]}
    if isinstance(checked, Refusal):
        refusal = checked.to_dict()
        return {
            "refusals": [{"turn": turn, **refusal}],
            "events": [event(EventKind.REFUSED, turn, PERSON, at, **refusal)],
        }
    resumed = event(
        EventKind.RESUMED,
        turn,
        PERSON,
        at,
        interaction_id=interaction["interaction_id"],
        reply=checked,
    )
    return {"replies": {interaction["interaction_id"]: checked}, "events": [resumed]}


def to_people(state: dict[str, Any], scope: str | None = None) -> list[Send]:
    """One `human` task for each pending interaction that has no reply yet, sealed for this run."""
    replies = state.get("replies", {})
    scope = run_scope() if scope is None else scope
    return [
        Send("human", sealed_payload("human", {"interaction": interaction}, scope))
        for interaction in state.get("pending", [])
        if interaction["interaction_id"] not in replies
    ]
