"""The ecosystem's human-in-the-loop shape, so Agent Inbox and Agent Chat UI can show and answer a
Warrant interaction: the interrupt value also carries LangChain's `HITLRequest` fields
(`action_requests`, `review_configs`; langchain's `HumanInTheLoopMiddleware`), and a reply may
come as its `HITLResponse` (`decisions`), beside Warrant's own interaction id, which stays the key;
the stock reply, which carries none, is bound by the interrupt it answers while its interaction is
the only one waiting (`guards.human.bound_by_interrupt`).

An approval offers approve, edit and reject; a question is an `ask_user` action answered with a
`respond` decision. A decision is turned into Warrant's reply and checked like any other: an edit
is a new proposal for the same tool, never another tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.codes import InteractionKind

APPROVAL_DECISIONS = ["approve", "edit", "reject"]
ASK_USER = "ask_user"


def hitl_request(interaction: Mapping[str, Any]) -> dict[str, Any]:
    """The `HITLRequest` fields for one interaction: one action request, its review config."""
    if interaction["kind"] == InteractionKind.QUESTION:
        action = {
            "name": ASK_USER,
            "args": {"question": interaction["question"]},
            "description": interaction["question"],
        }
        allowed = ["respond"]
    elif interaction["kind"] == InteractionKind.REMEMBER:
        call = interaction["call"]
        action = {
            "name": call["name"],
            "args": call["args"],
            "description": "Save this note to the team's memory (approve, edit its text, or reject it)?",
        }
        allowed = APPROVAL_DECISIONS
    else:
        call = interaction["call"]
        records = ", ".join(interaction.get("records", ()))
        action = {
            "name": call["name"],
            "args": call["args"],
            "description": f"Run {call['name']} (call {call['id']}) on {records}?",
        }
        allowed = APPROVAL_DECISIONS
    return {
        "action_requests": [action],
        "review_configs": [{"action_name": action["name"], "allowed_decisions": allowed}],
    }


def from_decisions(
    interaction: Mapping[str, Any], reply: Mapping[str, Any]
) -> dict[str, Any] | str:
    """Warrant's reply for a `decisions` reply (exactly one decision, of a kind this interaction
    allows), or what is wrong with it, in one line."""
    decisions = reply.get("decisions")
    if not isinstance(decisions, list) or len(decisions) != 1 or not isinstance(decisions[0], dict):
        return "decisions must hold exactly one decision for the one action requested"
    decision, kept = (
        decisions[0],
        {key: value for key, value in reply.items() if key != "decisions"},
    )
    kind = decision.get("type")
    allowed = hitl_request(interaction)["review_configs"][0]["allowed_decisions"]
    if kind not in allowed:
        return f"a {kind!r} decision does not answer this {interaction['kind']}; allowed: {', '.join(allowed)}"
    if kind == "respond":
        return kept | {"answer": decision.get("message")}
    if kind == "edit":
        edited = decision.get("edited_action")
        if not isinstance(edited, dict) or edited.get("name") != interaction["call"]["name"]:
            return f"an edit must keep the action's name, {interaction['call']['name']!r}"
        return kept | {"decision": "edit", "args": edited.get("args")}
    return kept | {"decision": kind}
