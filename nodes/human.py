"""The human node: one task per pending interaction, each waiting on a LangGraph interrupt.

Nothing is recorded before `interrupt()`: on resume LangGraph runs this node again from its top,
so the interaction itself was written by the guard beforehand. The reply must name the interaction
it answers (a stock `decisions` reply is bound by its interrupt while its interaction waits alone,
`guards.human`); a reply naming another one (or malformed) is refused and it stays pending.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Send, interrupt

from contract.codes import EventKind
from contract.shapes import HumanTask, Interaction
from contract.state import StepUpdate
from guards.human import approver_refusal, check_reply
from guards.inbox_schema import hitl_request
from guards.refusals import Refusal, bounded
from ledger.context import WarrantContext, event, now, store_of
from ledger.integrity import run_scope, sealed_payload
from nodes.control import stop_requested

PERSON = "human"
EXPIRED = {"expired": True}
"""The reply recorded for an interaction whose reply time passed."""
WITHDRAWN = {"withdrawn": True}
"""What `warrant stop` resumes a parked run's interactions with: taken only when a stop was asked
(`nodes.control`), each recorded as expired, withdrawn; the guard then ends the run stopped."""


def human(task: HumanTask, runtime: Runtime[WarrantContext]) -> StepUpdate:
    interaction = task["interaction"]
    if task.get("unattended"):  # a scheduled run: nobody waits on it, nothing is asked
        return _expired(interaction, now(runtime), unattended=True)
    reply = interrupt({**interaction, **hitl_request(interaction)})
    if reply == WITHDRAWN and stop_requested(store_of(runtime), run_scope()):
        return _expired(interaction, now(runtime), withdrawn=True)
    # What interrupt() returns was sent to this task's interrupt (by its id, or bare while it was
    # the only one); a task sent before `pending` was carried leaves the reply to name its own.
    checked = check_reply(interaction, reply, task.get("pending"))
    turn, at, iid = interaction["turn"], now(runtime), interaction["interaction_id"]
    if at > interaction.get("reply_by", at):  # too late: the reply is kept as data, not used
        return _expired(interaction, at, late_reply=bounded(reply))
    if not isinstance(checked, Refusal):
        responder = served_identity() or checked.get("by")
        checked = approver_refusal(interaction, responder) or _signed(checked, responder)
    if isinstance(checked, Refusal):
        refusal = checked.to_dict()
        return {
            "refusals": [checked.recorded(turn)],
            "events": [event(EventKind.REFUSED, turn, PERSON, at, **refusal)],
        }
    resumed = event(
        EventKind.RESUMED, turn, person_of(checked), at, interaction_id=iid, reply=checked
    )
    return {"replies": {iid: checked}, "events": [resumed]}


def _expired(interaction: Interaction, at: float, **why: Any) -> StepUpdate:
    """The interaction recorded expired (its reply `EXPIRED`), the event saying why: unasked in a
    scheduled run, withdrawn by a stop, or a reply that came too late."""
    iid = interaction["interaction_id"]
    expired = event(EventKind.EXPIRED, interaction["turn"], PERSON, at, interaction_id=iid, **why)
    return {"replies": {iid: EXPIRED}, "events": [expired]}


def person_of(reply: dict[str, Any]) -> str:
    """The ledger's actor for a reply: `human:NAME` when it names who replied."""
    return f"{PERSON}:{reply['by']}" if "by" in reply else PERSON


def _signed(reply: dict[str, Any], responder: str | None) -> dict[str, Any]:
    return reply | {"by": responder} if responder else reply


def served_identity() -> str | None:
    """The authenticated user's identity when the LangGraph server runs the graph (it outranks
    any name in the reply's body: a client cannot answer as someone else); None embedded."""
    try:
        user = get_config().get("configurable", {}).get("langgraph_auth_user")
    except RuntimeError:  # not inside a runnable
        return None
    identity = user.get("identity") if isinstance(user, dict) else getattr(user, "identity", None)
    return identity if isinstance(identity, str) and identity else None


def to_people(state: dict[str, Any], scope: str | None = None) -> list[Send]:
    """One `human` task for each pending interaction that has no reply yet, sealed for this run;
    each carries the ids of all of them (`pending`), which says whether a reply that names no
    interaction can only be for its own, and, in a scheduled run, that nobody waits on it
    (`unattended`: recorded expired at once, never an interrupt)."""
    replies = state.get("replies", {})
    scope = run_scope() if scope is None else scope
    waiting = [i for i in state.get("pending", []) if i["interaction_id"] not in replies]
    ids = [interaction["interaction_id"] for interaction in waiting]
    tasks: list[HumanTask] = [
        {"interaction": interaction, "pending": ids} for interaction in waiting
    ]
    if state.get("schedule"):
        tasks = [task | {"unattended": True} for task in tasks]
    return [Send("human", sealed_payload("human", dict(task), scope)) for task in tasks]
