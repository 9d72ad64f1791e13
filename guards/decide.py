"""The guard: one decision per proposal, the same checks for every chooser.

Checks run in this fixed order; the first that fails decides (per call for steps 4–8):

1. step budget      — the choice after the last budgeted turn       → step_budget_exhausted (ends)
2. deadline         — the scenario's deadline has passed            → deadline_passed (ends)
3. schema           — an action document, exactly one outcome       → malformed_action
4. message          — stop: hypotheses cite existing refs          → unknown_reference (recorded;
                      the stop stands, each statement kept, the bad citations marked unresolved)
                      ask_user: within the question budget         → question_budget_exhausted
                      delegate: `guards.delegation` (depth, count, task ids, records, carving)
                      remember: the run has memory, its refs exist → waits for a person (`remember`)
   recall           — a batch of `recall` calls alone, with memory: `guards.recall` (arguments,
                      call identity, repetition) → outcome `recall`; no evidence budget
5. catalog          — the tool is in this profile                   → unknown_tool
6. arguments        — the tool's strict argument model              → invalid_argument (tool)
                      (validated once, in `parse_proposal`; nothing validates them again)
7. call identity    — a used call id with other arguments           → duplicate_call_id
8. records          — exact ids in the scenario's registry          → unapproved_record (tool)
9. repetition       — the same call as one already executed         → repeated_request
10. evidence budget — the batch would exceed the evidence budget    → evidence_budget_exhausted
11. approval        — a record or tool that needs a person's approval → waits (outcome `approval`)

The whole batch is validated before any call runs: one refused call refuses the batch. A refused choice
beyond the scenario's refusal limit ends the run with `refusal_limit`. `decide` never raises.

Here stand the order and the budget; the per-call checks 5–9 (and the pre-call hooks) are one
tuple of functions in `guards.checks` (`CALL_CHECKS`); what is decided, one class per outcome, is
`guards.decision`.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any

from contract.codes import Owner, Status
from guards.action import (
    ActionDocument,
    AskUserMessage,
    DelegateMessage,
    RememberMessage,
    StopMessage,
    ToolCall,
)
from guards.budget import BudgetLeft, Spent, budget_left
from guards.checks import (
    Batch,
    ParsedProposal,
    call_signature,
    check_call,
    check_recall,
    mcp_schemas,
    parse_proposal,
)
from guards.citations import bound_citations, unresolved_refs
from guards.decision import (
    Approved,
    ApprovedCall,
    Ask,
    Decision,
    Delegate,
    End,
    NeedsApproval,
    Recall,
    Refused,
    Remember,
    Stop,
)
from guards.delegation import Room, delegation_refusals
from guards.hooks import Hook
from guards.recall import NO_MEMORY, RECALL, query_key
from guards.receipts import NO_RECEIPTS, Receipts, Seen
from guards.refusals import Refusal, RefusalCode
from scenario.registry import Scenario
from tools.args import ToolArgs
from tools.catalog import ToolSpec, tools_of


@dataclass(frozen=True)
class GuardContext:
    """What the guard knows about the run when a proposal arrives."""

    scenario: Scenario
    now: float
    spent: Spent
    receipts: Receipts = NO_RECEIPTS
    """The run's calls that already have a receipt, asked about by call id and by signature."""
    person_approved: frozenset[str] = frozenset()
    """Call ids a person approved (or edited) for this proposal; they do not wait again."""
    hooks: tuple[Hook, ...] = ()
    """The scenario's hooks, loaded; the pre-call ones may block an approved call."""
    depth: int = 0
    """0 for a run, 1 for its children, 2 for theirs."""
    delegated: Container[str] = frozenset()
    """Task ids this run delegated before."""
    recalled_queries: Container[str] = frozenset()
    """The queries this run recalled (`guards.recall.query_key`)."""
    local_read: frozenset[str] = frozenset()
    """The local sources of all the run was shown (`guards.provenance`): the chooser's words
    carry them, so they go to no remote party."""
    surface: frozenset[str] | None = None
    """The tools the request that produced this proposal showed a model (its manifest's
    `tools`); None for a chooser that is shown no request of its own (a script, a file)."""


def decide(proposal: object, ctx: GuardContext) -> Decision:
    """Decide one proposal (as the chooser gave it, or a `ParsedProposal` of it). Deny by
    default: only a fully checked batch is approved."""
    budget = ctx.scenario.budget
    left = _left(ctx)
    if left.end is Status.STEP_BUDGET_EXHAUSTED:
        detail = f"choice {ctx.spent.turn} exceeds the step budget of {budget.steps}"
        if ctx.spent.child_turns:
            detail += f" ({ctx.spent.child_turns} step(s) spent by children)"
        return _end(Status.STEP_BUDGET_EXHAUSTED, RefusalCode.STEP_BUDGET_EXHAUSTED, detail)
    if left.end is Status.DEADLINE_PASSED:
        detail = f"the deadline of {budget.deadline_s}s from admission has passed"
        return _end(Status.DEADLINE_PASSED, RefusalCode.DEADLINE_PASSED, detail)
    parsed = proposal if isinstance(proposal, ParsedProposal) else None
    if parsed is None or parsed.profile != ctx.scenario.profile:
        parsed = parse_proposal(proposal, ctx.scenario.profile, mcp_schemas(ctx.scenario))
    document = parsed.document
    if isinstance(document, Refusal):
        return _refused(ctx, [document])
    if document.message is not None:
        return _decide_message(document, ctx)
    return _decide_calls(document, parsed.validated, ctx)


def _decide_message(document: ActionDocument, ctx: GuardContext) -> Decision:
    message = document.message
    if isinstance(message, DelegateMessage):
        return _decide_delegation(message, ctx)
    if isinstance(message, RememberMessage):
        return _decide_remember(message, ctx)
    if isinstance(message, AskUserMessage):
        if _questions_left(ctx) <= 0:
            detail = f"the question budget of {ctx.scenario.budget.questions} is spent"
            return _refused(
                ctx, [Refusal(RefusalCode.QUESTION_BUDGET_EXHAUSTED, Owner.GUARD, detail)]
            )
        return Ask(message.question, message.blocking)
    if not isinstance(message, StopMessage):  # the document's schema admits no other message
        return _refused(
            ctx, [Refusal(RefusalCode.MALFORMED_ACTION, Owner.GUARD, "no message to decide")]
        )
    refusals: tuple[Refusal, ...] = ()
    if missing := unresolved_refs(message.hypotheses, ctx.spent.evidence_refs):
        detail = (
            f"hypotheses cite evidence that does not exist: {', '.join(missing)}; "
            "the statements are kept with those citations marked unresolved"
        )
        refusals = (Refusal(RefusalCode.UNKNOWN_REFERENCE, Owner.GUARD, detail),)
    hypotheses = tuple(bound_citations(message.hypotheses, ctx.spent.evidence_refs))
    return Stop(message, hypotheses, refusals)


def _decide_delegation(message: DelegateMessage, ctx: GuardContext) -> Decision:
    left = _left(ctx)
    room = Room(left.steps - 1, left.evidence, _questions_left(ctx))
    refusals = delegation_refusals(message, ctx.scenario, room, ctx.depth, ctx.delegated)
    if refusals:
        return _refused(ctx, refusals)
    return Delegate(tuple(message.tasks))


def _decide_remember(message: RememberMessage, ctx: GuardContext) -> Decision:
    """A note for memory waits for a person; it may cite only refs the run has."""
    if ctx.scenario.memory is None:
        return _refused(
            ctx, [Refusal(RefusalCode.UNKNOWN_TOOL, Owner.GUARD, f"remember: {NO_MEMORY}")]
        )
    if missing := sorted({ref for ref in message.refs if ref not in ctx.spent.evidence_refs}):
        detail = f"the note cites refs that do not exist: {', '.join(missing)}"
        return _refused(ctx, [Refusal(RefusalCode.UNKNOWN_REFERENCE, Owner.GUARD, detail)])
    note = {"text": message.text, "signature": message.signature, "refs": list(message.refs)}
    return Remember(note)


def _decide_recall(calls: list[ToolCall], ctx: GuardContext) -> Decision:
    """A batch of recall calls: a look into memory, decided apart from reads of records."""
    if ctx.scenario.memory is None:
        return _refused(
            ctx,
            [
                Refusal(
                    RefusalCode.UNKNOWN_TOOL, Owner.GUARD, f"recall: {NO_MEMORY}", call.model_dump()
                )
                for call in calls
            ],
        )
    if any(call.name != RECALL for call in calls):
        detail = "recall is a control tool: propose it in a batch of its own, without reads"
        return _refused(ctx, [Refusal(RefusalCode.MALFORMED_ACTION, Owner.GUARD, detail)])
    seen = Seen(ctx.receipts)
    asked: set[str] = set()
    recalls, refusals = [], []
    for call in calls:
        checked = check_recall(call, seen, lambda key: key in asked or key in ctx.recalled_queries)
        if isinstance(checked, Refusal):
            refusals.append(checked)
            continue
        key = query_key(checked.query)
        recalls.append({"id": call.id, "query": checked.query, "limit": checked.limit})
        seen.add(call.id, call_signature(RECALL, {"query": key}))
        asked.add(key)
    if refusals:
        return _refused(ctx, refusals)
    return Recall(tuple(recalls))


def _questions_left(ctx: GuardContext) -> int:
    return ctx.scenario.budget.questions - ctx.spent.questions


def _decide_calls(
    document: ActionDocument,
    validated: tuple[ToolArgs | Refusal | None, ...],
    ctx: GuardContext,
) -> Decision:
    if any(call.name == RECALL for call in document.tool_calls or ()):
        return _decide_recall(list(document.tool_calls or ()), ctx)
    catalog = tools_of(ctx.scenario.profile)
    approved: list[ApprovedCall] = []
    refusals: list[Refusal] = []
    seen = Seen(ctx.receipts)
    batch = Batch(
        ctx.scenario,
        catalog,
        seen,
        ctx.surface,
        ctx.local_read,
        ctx.hooks,
        ctx.spent.turn,
        ctx.spent.evidence_refs,
    )
    for call, args in zip(document.tool_calls or (), validated, strict=True):
        checked = check_call(call, args, batch)
        if isinstance(checked, Refusal):
            refusals.append(checked)
            continue
        approved.append(checked)
        seen.add(call.id, checked.signature)
    if refusals:
        return _refused(ctx, refusals)
    room = _left(ctx).evidence
    if len(approved) > room:
        detail = f"{len(approved)} call(s) but room for {max(room, 0)} more evidence item(s)"
        return _refused(
            ctx,
            [
                Refusal(
                    RefusalCode.EVIDENCE_BUDGET_EXHAUSTED, Owner.GUARD, detail, call.model_dump()
                )
                for call in document.tool_calls or ()
            ],
        )
    needs_person = tuple(
        call.id
        for call in approved
        if call.id not in ctx.person_approved and _needs_approval(call, catalog, ctx.scenario)
    )
    if needs_person:
        return NeedsApproval(tuple(approved), needs_person)
    return Approved(tuple(approved))


def _left(ctx: GuardContext) -> BudgetLeft:
    budget = ctx.scenario.budget
    spent = ctx.spent
    return budget_left(
        steps=budget.steps,
        evidence=budget.evidence,
        turn=spent.steps,
        observations=spent.observations,
        deadline_at=spent.deadline_at,
        now=ctx.now,
    )


def batch_after_people(summary: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The batch as people left it (its calls approved or edited): a proposal to decide again."""
    tool_calls = [{"id": call["id"], "name": call["name"], "args": call["args"]} for call in calls]
    return {"summary": summary, "tool_calls": tool_calls}


def decide_after_people(proposal: object, rejections: list[Refusal], ctx: GuardContext) -> Decision:
    """Re-decide a batch after people decided on it (`batch_after_people`): a rejection refuses
    it; otherwise the (possibly edited) calls pass every check again, with the calls a person
    approved no longer waiting."""
    if rejections:
        return _refused(ctx, rejections)
    return decide(proposal, ctx)


def _needs_approval(
    call: ApprovedCall, catalog: Mapping[str, ToolSpec], scenario: Scenario
) -> bool:
    if call.name not in catalog:  # an admitted MCP tool: `human`, and every `write` tool
        tool = scenario.mcp_tools[call.name]
        return tool.approval == "human" or tool.effects == "write"
    members = call.family.members if call.family is not None else ()
    return catalog[call.name].needs_approval or any(
        record.approval == "human" for record in (*call.resolved.values(), *members)
    )


def _refused(ctx: GuardContext, refusals: list[Refusal]) -> End | Refused:
    limit = ctx.scenario.budget.refusal_limit
    if ctx.spent.refused_choices + 1 > limit:
        return End(Status.REFUSAL_LIMIT, tuple(refusals))
    return Refused(tuple(refusals))


def _end(status: Status, code: RefusalCode, detail: str) -> End:
    return End(status, (Refusal(code, Owner.GUARD, detail),))
