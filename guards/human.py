"""A person's replies: bound to the exact interaction, and no wider than what the guard allows.

A reply names the interaction it answers (seed 001, HIO: route by interaction identity, never to
"whatever is latest"); a stock `decisions` reply, which names none, is bound by the interrupt it
was sent to, and only while that interaction is the one waiting. An edited call is re-checked by
the same guard as any chooser's proposal, so an edit cannot widen the grant; approval only lets a
call that passed every other check run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from contract.codes import InteractionKind, Owner
from contract.strict import StrictModel
from contract.text import USER_NAME, describe_validation_error, one_line
from guards.action import EvidenceRef, storable_problem
from guards.inbox_schema import from_decisions
from guards.refusals import Refusal, RefusalCode

Responder = Annotated[str, StringConstraints(pattern=f"^{USER_NAME.pattern}$")]
"""Who answers: a user name (letters, digits, `_.@+-`)."""


class QuestionReply(StrictModel):
    interaction_id: str
    answer: Annotated[str, StringConstraints(min_length=1, max_length=4000)]
    by: Responder | None = None


class ApprovalReply(StrictModel):
    interaction_id: str
    by: Responder | None = None
    decision: Literal["approve", "reject", "edit"]
    args: dict[str, Any] | None = None
    """The replacement arguments, for `edit` only."""

    @model_validator(mode="after")
    def _args_only_for_edit(self) -> ApprovalReply:
        if (self.decision == "edit") != (self.args is not None):
            raise ValueError("args are required for edit, and only for edit")
        return self


class NoteEdit(StrictModel):
    """A person's edit of a note proposed for memory: the text (and signature) to save instead."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    signature: Annotated[str, StringConstraints(max_length=200)] = ""
    refs: Annotated[list[EvidenceRef], Field(max_length=20)] = []
    """As proposed (an inbox's edit sends the whole action back); kept with the decision."""


def check_reply(
    interaction: Mapping[str, Any], reply: object, pending: Sequence[str] | None = None
) -> dict[str, Any] | Refusal:
    """The reply, validated for this interaction, or a refusal owned by `human`.

    `pending`: the interactions waiting with this one, when the reply came by this interaction's
    own interrupt (`nodes.human`); None when nothing but the reply can say what it answers (a
    saved answer)."""
    if problem := storable_problem(reply):
        return Refusal(
            RefusalCode.MALFORMED_REPLY, Owner.HUMAN, problem.replace("document", "reply")
        )
    reply = bound_by_interrupt(interaction, reply, pending)
    if isinstance(reply, Refusal):
        return reply
    expected = interaction["interaction_id"]
    named = reply.get("interaction_id") if isinstance(reply, dict) else None
    if named != expected:
        detail = (
            f"the reply names interaction {one_line(repr(named), 80)}, not the pending {expected}"
        )
        return Refusal(RefusalCode.INTERACTION_MISMATCH, Owner.HUMAN, detail)
    if (
        isinstance(reply, dict) and "decisions" in reply
    ):  # Agent Inbox's shape (`guards.inbox_schema`)
        converted = from_decisions(interaction, reply)
        if isinstance(converted, str):
            return Refusal(RefusalCode.MALFORMED_REPLY, Owner.HUMAN, converted)
        reply = converted
    model = QuestionReply if interaction["kind"] == InteractionKind.QUESTION else ApprovalReply
    try:
        checked = model.model_validate(reply).model_dump(exclude_none=True)
        if interaction["kind"] == InteractionKind.REMEMBER and "args" in checked:
            checked["args"] = NoteEdit.model_validate(checked["args"]).model_dump()
        return checked
    except ValidationError as exc:
        return Refusal(
            RefusalCode.MALFORMED_REPLY,
            Owner.HUMAN,
            f"not a {interaction['kind']} reply: {describe_validation_error(exc)}",
        )


def bound_by_interrupt(
    interaction: Mapping[str, Any], reply: object, pending: Sequence[str] | None
) -> object | Refusal:
    """A stock `decisions` reply (LangChain's HITL middleware, Agent Inbox) names no interaction:
    the interrupt it was sent to binds it to this one when this one is all that waits. With
    several waiting, nothing says which one the person decided, so it is refused; any other reply
    is left to name its interaction itself."""
    if (
        pending is None
        or not isinstance(reply, dict)
        or "decisions" not in reply
        or reply.get("interaction_id") is not None
    ):
        return reply
    expected = interaction["interaction_id"]
    if list(pending) == [expected]:
        return {**reply, "interaction_id": expected}
    detail = (
        f"the reply names no interaction and {len(pending)} are pending ({', '.join(pending)}):"
        ' add "interaction_id" beside its decisions to say which one it answers'
    )
    return Refusal(RefusalCode.INTERACTION_MISMATCH, Owner.HUMAN, detail)


def apply_decisions(
    calls: list[dict[str, Any]], decisions: Mapping[str, Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], frozenset[str], list[Refusal]]:
    """People's decisions (by call id) applied to a batch.

    Returns the calls to re-check (edited arguments in place), the ids a person approved, and the
    rejections; one rejection refuses the whole batch, as one refused call would, and each other
    call of the batch is refused with it.
    """
    rechecked: list[dict[str, Any]] = []
    approved: set[str] = set()
    rejections: list[Refusal] = []
    for call in calls:
        decision = decisions.get(call["id"])
        if decision is None:
            rechecked.append(call)
            continue
        if decision.get("expired"):
            detail = "not run: nobody decided within the interaction's reply time"
            rejections.append(Refusal(RefusalCode.INTERACTION_EXPIRED, Owner.HUMAN, detail, call))
            continue
        if decision["decision"] == "reject":
            rejections.append(
                Refusal(RefusalCode.REJECTED, Owner.HUMAN, "a person rejected this call", call)
            )
            continue
        if decision["decision"] == "edit":
            call = {**call, "args": decision["args"]}
        approved.add(call["id"])
        rechecked.append(call)
    if rejections:
        return [], frozenset(approved), rejections + _refused_with(rechecked, rejections)
    return rechecked, frozenset(approved), rejections


def _refused_with(calls: list[dict[str, Any]], rejections: list[Refusal]) -> list[Refusal]:
    """The batch's other calls, refused with it: each leaves a record of why it did not run,
    also when a person approved it."""
    rejected = ", ".join(str((refusal.call or {}).get("id")) for refusal in rejections)
    detail = f"not run: a person rejected {rejected} of the same batch, which refuses the batch"
    return [Refusal(RefusalCode.REJECTED, Owner.HUMAN, detail, call) for call in calls]


def approver_refusal(interaction: Mapping[str, Any], responder: str | None) -> Refusal | None:
    """An approval the scenario reserves for named people (`approvers`), given by someone else
    (or by nobody named): refused, and the interaction stays pending."""
    approvers = interaction.get("approvers") or ()
    if interaction["kind"] != InteractionKind.APPROVAL or not approvers or responder in approvers:
        return None
    who = f"{one_line(responder, 100)!r}" if responder else "an unnamed person"
    detail = f"{who} may not decide this call; the scenario names {', '.join(approvers)}"
    return Refusal(RefusalCode.NOT_AN_APPROVER, Owner.HUMAN, detail)
