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

A `Decision` is one class per outcome (`Approved`, `NeedsApproval`, `Ask`, `Delegate`, `Remember`,
`Recall`, `Stop`, `End`, `Refused`), each carrying only what its outcome needs; the guard node
`match`es on it. `recorded_decision` writes it as state holds it (`contract.shapes.RecordedDecision`).
"""

from __future__ import annotations

import json
from collections import ChainMap
from collections.abc import Callable, Collection, Container, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias, cast

from pydantic import ValidationError

from contract.codes import ANSWER, OBSERVATION, RECOLLECTION, Outcome, Status
from contract.shapes import RecordedCall, RecordedDecision, RecordedFamily
from guards.action import (
    ActionDocument,
    AskUserMessage,
    DelegateMessage,
    DelegateTask,
    RememberMessage,
    StopMessage,
    ToolCall,
    parse_action,
)
from guards.budget import BudgetLeft, budget_left
from guards.citations import bound_citations, unresolved_refs
from guards.delegation import Room, delegation_refusals
from guards.hooks import CallView, Hook, RunView, frozen, pre_call_block
from guards.provenance import local_egress
from guards.recall import NO_MEMORY, RECALL, RecallArgs, query_key, recall_args
from guards.refusals import GUARD, Refusal, RefusalCode, tool_owner
from tools.args import ToolArgs
from tools.catalog import ToolSpec, tools_of
from tools.errors import RecordRefusal
from tools.mcp.arguments import McpArgs, checked_args
from tools.records.registry import Family, Record, Scenario
from tools.validation import describe_validation_error


@dataclass(frozen=True)
class Refs(Collection[str]):
    """The refs a run can cite, E1…En, H1…Hm and M1…Mk, without listing them: each kind is
    numbered without gaps, so its counts say which refs exist. M refs are recalled notes: citable,
    never evidence (the evidence budget counts observations only)."""

    observations: int
    answers: int = 0
    recalled: int = 0

    def __contains__(self, ref: object) -> bool:
        if not isinstance(ref, str) or not ref[1:].isdecimal() or ref[1:2] == "0":
            return False
        counts = {OBSERVATION: self.observations, ANSWER: self.answers, RECOLLECTION: self.recalled}
        return 1 <= int(ref[1:]) <= counts.get(ref[0], 0)

    def __iter__(self) -> Iterator[str]:
        yield from (f"{OBSERVATION}{n}" for n in range(1, self.observations + 1))
        yield from (f"{ANSWER}{n}" for n in range(1, self.answers + 1))
        yield from (f"{RECOLLECTION}{n}" for n in range(1, self.recalled + 1))

    def __len__(self) -> int:
        return self.observations + self.answers + self.recalled


@dataclass(frozen=True)
class GuardContext:
    """What the guard knows about the run when a proposal arrives."""

    scenario: Scenario
    turn: int
    """The turn of this proposal, from 1."""
    now: float
    deadline_at: float
    evidence_refs: Collection[str] = frozenset()
    executed: Mapping[str, str] = field(default_factory=dict)
    """Call id → signature of the calls that already have a receipt (only looked up by id)."""
    executed_signatures: Container[str] | None = None
    """The signatures of the calls that already have a receipt; by default `executed`'s."""
    refused_choices: int = 0
    """Earlier choices that were refused."""
    questions_asked: int = 0
    person_approved: frozenset[str] = frozenset()
    """Call ids a person approved (or edited) for this proposal; they do not wait again."""
    hooks: tuple[Hook, ...] = ()
    """The scenario's hooks, loaded; the pre-call ones may block an approved call."""
    depth: int = 0
    """0 for a run, 1 for its children, 2 for theirs."""
    delegated: Container[str] = frozenset()
    """Task ids this run delegated before."""
    child_turns: int = 0
    """Steps this run's children spent (handed off): they count against its step budget."""
    child_questions: int = 0
    """Questions this run's children asked (handed off)."""
    recalled_queries: Container[str] = frozenset()
    """The queries this run recalled (`guards.recall.query_key`)."""
    local_read: frozenset[str] = frozenset()
    """The local sources of all the run was shown (`guards.provenance`): the chooser's words
    carry them, so they go to no remote party."""
    surface: frozenset[str] | None = None
    """The tools the request that produced this proposal showed a model (its manifest's
    `tools`); None for a chooser that is shown no request of its own (a script, a file)."""


@dataclass(frozen=True)
class ApprovedCall:
    """A call the guard approved, with its validated arguments and resolved record ids."""

    id: str
    name: str
    args: dict[str, Any]
    """The arguments as the tool's model validated them (`model_dump`): what is recorded, sealed
    and sent to the executor, which rebuilds the model from them without validating again."""
    records: dict[str, str]
    """Argument field → approved record id."""
    resolved: dict[str, Record]
    """Argument field → the record the registry resolved (what the executor will read)."""
    signature: str
    family: Family | None = None
    """A family tool's members, as the registry resolved them."""

    def recorded(self) -> RecordedCall:
        """The call as the recorded decision holds it (`contract.shapes.RecordedCall`)."""
        recorded: RecordedCall = {
            "id": self.id,
            "name": self.name,
            "args": self.args,
            "records": self.records,
        }
        if self.family is not None:
            recorded["family"] = recorded_family(self.family)
        return recorded

    def recorded_to_run(self, ref: str) -> RecordedCall:
        """The call approved to run now: with the evidence ref its receipt will have and the
        admitted records the executor reads (`sources`)."""
        sources = {field: record.model_dump() for field, record in self.resolved.items()}
        return {**self.recorded(), "ref": ref, "sources": sources}


# The decision: one class per outcome, each with only what that outcome carries. `outcome` is the
# `Outcome` value recorded in state (`contract.shapes.RecordedDecision`).


@dataclass(frozen=True)
class Approved:
    """Every call of the batch passed every check and runs now (outcome `execute`)."""

    calls: tuple[ApprovedCall, ...]
    outcome: ClassVar[Outcome] = Outcome.EXECUTE


@dataclass(frozen=True)
class NeedsApproval:
    """The batch passed every check, and some of its calls wait for a person (`approval`)."""

    calls: tuple[ApprovedCall, ...]
    needs_person: tuple[str, ...]
    """The ids of the calls (of `calls`) that wait for a person's decision."""
    outcome: ClassVar[Outcome] = Outcome.APPROVAL


@dataclass(frozen=True)
class Ask:
    """A question for a person: the run waits for the answer (`ask`), or goes on (`asked`)."""

    question: str
    blocking: bool = True

    @property
    def outcome(self) -> Outcome:
        return Outcome.ASK if self.blocking else Outcome.ASKED


@dataclass(frozen=True)
class Delegate:
    """Child investigations start, one per task (`delegate`)."""

    tasks: tuple[DelegateTask, ...]
    outcome: ClassVar[Outcome] = Outcome.DELEGATE


@dataclass(frozen=True)
class Remember:
    """A note proposed for memory (text, signature, refs), waiting for a person (`remember`)."""

    note: dict[str, Any]
    outcome: ClassVar[Outcome] = Outcome.REMEMBER


@dataclass(frozen=True)
class Recall:
    """A look into memory (`recall`): each recall call's id, query and limit."""

    recalls: tuple[dict[str, Any], ...]
    outcome: ClassVar[Outcome] = Outcome.RECALL


@dataclass(frozen=True)
class Stop:
    """The chooser stops (`stop`): its text and statements, the citations bound; a citation of a
    ref that does not exist is recorded as a refusal, and the stop stands."""

    stop: StopMessage
    hypotheses: tuple[dict[str, Any], ...]
    """The statements with their citations bound (`guards.citations`)."""
    refusals: tuple[Refusal, ...] = ()
    outcome: ClassVar[Outcome] = Outcome.STOP
    status: ClassVar[Status] = Status.STOPPED


@dataclass(frozen=True)
class End:
    """The run ends with `status` (a budget, the deadline, the refusal limit, the model)."""

    status: Status
    refusals: tuple[Refusal, ...]
    outcome: ClassVar[Outcome] = Outcome.END


@dataclass(frozen=True)
class Refused:
    """The proposal is refused; the chooser takes the next turn (`refused`)."""

    refusals: tuple[Refusal, ...]
    outcome: ClassVar[Outcome] = Outcome.REFUSED


Decision: TypeAlias = (
    Approved | NeedsApproval | Ask | Delegate | Remember | Recall | Stop | End | Refused
)
"""What the guard decided of one proposal."""


def refusals_of(decision: Decision) -> tuple[Refusal, ...]:
    """The refusals a decision records (a stop's, an end's or a refusal's; none otherwise)."""
    match decision:
        case Stop(refusals=refusals) | End(refusals=refusals) | Refused(refusals=refusals):
            return refusals
        case _:
            return ()


@dataclass(frozen=True)
class ParsedProposal:
    """A proposal parsed once, and each tool call's arguments validated once by its tool's strict
    model: what the guard decides, and what the guard node reads the run's receipts for
    beforehand. The one validation of a call's arguments on its way to a receipt."""

    profile: str
    document: ActionDocument | Refusal
    validated: tuple[ToolArgs | Refusal | None, ...] = ()
    """Per tool call, in order: its validated arguments, its `invalid_argument` refusal (owner
    `tool:<name>`), or None for a name that is no tool of the profile (`recall` included)."""

    def call_ids(self) -> list[str]:
        if isinstance(self.document, Refusal):
            return []
        return [call.id for call in self.document.tool_calls or ()]

    def signatures(self) -> list[str]:
        """The signatures of the calls whose arguments validate."""
        if isinstance(self.document, Refusal):
            return []
        return [
            call_signature(
                call.name, args.values if isinstance(args, McpArgs) else args.model_dump()
            )
            for call, args in zip(self.document.tool_calls or (), self.validated, strict=True)
            if isinstance(args, ToolArgs)
        ]


def parse_proposal(
    raw: object, profile: str, mcp_schemas: Mapping[str, dict[str, Any]] | None = None
) -> ParsedProposal:
    """Parse a proposal and validate each call's arguments against its tool in `profile`, or an
    admitted MCP tool's pinned input schema (`mcp_schemas`: `server.tool` → schema)."""
    document = parse_action(raw)
    if isinstance(document, Refusal):
        return ParsedProposal(profile, document)
    catalog = tools_of(profile)
    schemas = mcp_schemas or {}
    validated = tuple(
        _validated_args(call, catalog[call.name])
        if call.name in catalog
        else _validated_mcp_args(call, schemas[call.name])
        if call.name in schemas
        else None
        for call in document.tool_calls or ()
    )
    return ParsedProposal(profile, document, validated)


def _validated_mcp_args(call: ToolCall, schema: dict[str, Any]) -> McpArgs | Refusal:
    checked = checked_args(call.args, schema)
    if isinstance(checked, str):
        return Refusal(
            RefusalCode.INVALID_ARGUMENT, tool_owner(call.name), checked, call.model_dump()
        )
    return checked


def _validated_args(call: ToolCall, spec: ToolSpec) -> ToolArgs | Refusal:
    try:
        return spec.args_model.model_validate(call.args)
    except (ValidationError, RecursionError) as exc:
        detail = describe_validation_error(exc) if isinstance(exc, ValidationError) else "too deep"
        return Refusal(
            RefusalCode.INVALID_ARGUMENT, tool_owner(spec.name), detail, call.model_dump()
        )


def decide(proposal: object, ctx: GuardContext) -> Decision:
    """Decide one proposal (as the chooser gave it, or a `ParsedProposal` of it). Deny by
    default: only a fully checked batch is approved."""
    budget = ctx.scenario.budget
    left = _left(ctx)
    if left.end is Status.STEP_BUDGET_EXHAUSTED:
        detail = f"choice {ctx.turn} exceeds the step budget of {budget.steps}"
        if ctx.child_turns:
            detail += f" ({ctx.child_turns} step(s) spent by children)"
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
            return _refused(ctx, [Refusal(RefusalCode.QUESTION_BUDGET_EXHAUSTED, GUARD, detail)])
        return Ask(message.question, message.blocking)
    if not isinstance(message, StopMessage):  # the document's schema admits no other message
        return _refused(ctx, [Refusal(RefusalCode.MALFORMED_ACTION, GUARD, "no message to decide")])
    refusals: tuple[Refusal, ...] = ()
    if missing := unresolved_refs(message.hypotheses, ctx.evidence_refs):
        detail = (
            f"hypotheses cite evidence that does not exist: {', '.join(missing)}; "
            "the statements are kept with those citations marked unresolved"
        )
        refusals = (Refusal(RefusalCode.UNKNOWN_REFERENCE, GUARD, detail),)
    hypotheses = tuple(bound_citations(message.hypotheses, ctx.evidence_refs))
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
        return _refused(ctx, [Refusal(RefusalCode.UNKNOWN_TOOL, GUARD, f"remember: {NO_MEMORY}")])
    if missing := sorted({ref for ref in message.refs if ref not in ctx.evidence_refs}):
        detail = f"the note cites refs that do not exist: {', '.join(missing)}"
        return _refused(ctx, [Refusal(RefusalCode.UNKNOWN_REFERENCE, GUARD, detail)])
    note = {"text": message.text, "signature": message.signature, "refs": list(message.refs)}
    return Remember(note)


def _decide_recall(calls: list[ToolCall], ctx: GuardContext) -> Decision:
    """A batch of recall calls: a look into memory, decided apart from reads of records."""
    if ctx.scenario.memory is None:
        return _refused(
            ctx,
            [
                Refusal(RefusalCode.UNKNOWN_TOOL, GUARD, f"recall: {NO_MEMORY}", call.model_dump())
                for call in calls
            ],
        )
    if any(call.name != RECALL for call in calls):
        detail = "recall is a control tool: propose it in a batch of its own, without reads"
        return _refused(ctx, [Refusal(RefusalCode.MALFORMED_ACTION, GUARD, detail)])
    seen_ids: ChainMap[str, str] = ChainMap({}, cast("MutableMapping[str, str]", ctx.executed))
    asked: set[str] = set()
    recalls, refusals = [], []
    for call in calls:
        checked = _check_recall(
            call, seen_ids, lambda key: key in asked or key in ctx.recalled_queries
        )
        if isinstance(checked, Refusal):
            refusals.append(checked)
            continue
        key = query_key(checked.query)
        recalls.append({"id": call.id, "query": checked.query, "limit": checked.limit})
        seen_ids[call.id] = call_signature(RECALL, {"query": key})
        asked.add(key)
    if refusals:
        return _refused(ctx, refusals)
    return Recall(tuple(recalls))


def _check_recall(
    call: ToolCall, seen_ids: Mapping[str, str], recalled: Callable[[str], bool]
) -> RecallArgs | Refusal:
    """One recall call, checked as a tool call is: its strict arguments, its id, repetition
    (`recalled`: whether this run or batch already recalled a query's words)."""
    args = recall_args(call)
    if isinstance(args, Refusal):
        return args
    key = query_key(args.query)
    if reused := _reused_id(call, call_signature(RECALL, {"query": key}), seen_ids):
        return reused
    if recalled(key):
        detail = f"recall of {args.query[:80]!r} was already made in this run"
        return Refusal(RefusalCode.REPEATED_REQUEST, GUARD, detail, call.model_dump())
    return args


def _questions_left(ctx: GuardContext) -> int:
    return ctx.scenario.budget.questions - ctx.questions_asked - ctx.child_questions


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
    earlier = (
        ctx.executed_signatures
        if ctx.executed_signatures is not None
        else frozenset(ctx.executed.values())
    )
    # A ChainMap writes to its first map only: the run's executed calls are read, never written.
    seen_ids: ChainMap[str, str] = ChainMap({}, cast("MutableMapping[str, str]", ctx.executed))
    batch: set[str] = set()
    for call, args in zip(document.tool_calls or (), validated, strict=True):
        if ctx.surface is not None and call.name not in ctx.surface:
            detail = (
                f"{call.name[:64]!r} was not among the tools the model's request showed"
                " (its manifest's tools): a tool not shown is not called"
            )
            refusals.append(Refusal(RefusalCode.UNKNOWN_TOOL, GUARD, detail, call.model_dump()))
            continue
        checked = _check_call(
            call,
            args,
            catalog,
            ctx.scenario,
            seen_ids,
            lambda sig: sig in batch or sig in earlier,
            ctx.local_read,
        )
        if not isinstance(checked, Refusal):
            checked = _hooked(checked, call, ctx)
        if isinstance(checked, Refusal):
            refusals.append(checked)
            continue
        approved.append(checked)
        seen_ids[call.id] = checked.signature
        batch.add(checked.signature)
    if refusals:
        return _refused(ctx, refusals)
    room = _left(ctx).evidence
    if len(approved) > room:
        detail = f"{len(approved)} call(s) but room for {max(room, 0)} more evidence item(s)"
        return _refused(
            ctx,
            [
                Refusal(RefusalCode.EVIDENCE_BUDGET_EXHAUSTED, GUARD, detail, call.model_dump())
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
    return budget_left(
        steps=budget.steps,
        evidence=budget.evidence,
        turn=ctx.turn + ctx.child_turns,
        observations=_observations(ctx.evidence_refs),
        deadline_at=ctx.deadline_at,
        now=ctx.now,
    )


def _observations(refs: Collection[str]) -> int:
    if isinstance(refs, Refs):
        return refs.observations
    return sum(ref.startswith(OBSERVATION) for ref in refs)


def recorded_family(family: Family) -> RecordedFamily:
    """A family as a decision and a receipt record it: its name, size and digest, and its ids
    only when listed (a glob's are the grant's: `Scenario.families`)."""
    recorded: RecordedFamily = {
        "name": family.name,
        "glob": family.glob,
        "members": len(family.members),
        "sha256": family.sha256,
        "share": family.share,
    }
    if family.glob is None:
        recorded["ids"] = list(family.ids)
    return recorded


def mcp_schemas(scenario: Scenario) -> dict[str, dict[str, Any]]:
    """`server.tool` → the input schema pinned at admission, for each admitted MCP tool."""
    return {name: tool.input_schema for name, tool in scenario.mcp_tools.items()}


def _check_mcp_call(
    call: ToolCall,
    args: McpArgs,
    seen_ids: Mapping[str, str],
    seen_signature: Callable[[str], bool],
) -> ApprovedCall | Refusal:
    """An admitted MCP tool's call: its arguments as its pinned schema accepted them, its id and
    repetition checked as any call's; it reads no record of the grant."""
    signature = call_signature(call.name, args.values)
    if reused := _reused_id(call, signature, seen_ids):
        return reused
    if seen_signature(signature):
        detail = f"{call.name} with these arguments was already requested in this run"
        return Refusal(RefusalCode.REPEATED_REQUEST, GUARD, detail, call.model_dump())
    return ApprovedCall(call.id, call.name, dict(args.values), {}, {}, signature)


def _check_call(
    call: ToolCall,
    args: ToolArgs | Refusal | None,
    catalog: Mapping[str, ToolSpec],
    scenario: Scenario,
    seen_ids: Mapping[str, str],
    seen_signature: Callable[[str], bool],
    local_read: frozenset[str] = frozenset(),
) -> ApprovedCall | Refusal:
    """Checks 5–9 of one call; its arguments come validated (`parse_proposal`). An MCP call to a
    remote server is refused when the run was shown local content (its arguments carry it)."""
    offending = call.model_dump()
    if call.name in scenario.mcp_tools and call.name not in catalog:
        if isinstance(args, Refusal):
            return args
        if not isinstance(args, McpArgs):
            detail = f"{call.name[:64]!r}: arguments not checked against its schema"
            return Refusal(RefusalCode.INVALID_ARGUMENT, GUARD, detail, offending)
        tool = scenario.mcp_tools[call.name]
        if leaked := local_egress(tool.server, tool.locality, local_read):
            return Refusal(RefusalCode.LOCAL_DATA, GUARD, f"{call.name}: {leaked}", offending)
        return _check_mcp_call(call, args, seen_ids, seen_signature)
    spec = catalog.get(call.name)
    if spec is None or args is None:
        detail = f"{call.name[:64]!r} is not a tool of the {scenario.profile} profile"
        return Refusal(RefusalCode.UNKNOWN_TOOL, GUARD, detail, offending)
    if isinstance(args, Refusal):
        return args
    validated = args.model_dump()
    signature = call_signature(spec.name, validated)
    if reused := _reused_id(call, signature, seen_ids):
        return reused
    resolved: dict[str, Record] = {}
    family: Family | None = None
    try:
        for name in spec.record_fields:
            if validated.get(name) is None and name in spec.optional_records:
                continue
            resolved[name] = scenario.lookup(validated[name], spec.record_kind, spec.name)
        named = validated.get(spec.family_field) if spec.family_field is not None else None
        if spec.family_field is not None and (
            named is not None or spec.family_field not in spec.optional_records
        ):
            family = scenario.family(named, spec.family_kind, spec.name)
        if spec.tables_field is not None:
            for table, record_id in validated[spec.tables_field].items():
                record = scenario.lookup(record_id, spec.table_kinds, spec.name)
                resolved[f"{spec.tables_field}.{table}"] = record
    except RecordRefusal as refusal:
        return Refusal(refusal.code, tool_owner(spec.name), refusal.detail, offending)
    if seen_signature(signature):
        detail = f"{spec.name} with these arguments was already requested in this run"
        return Refusal(RefusalCode.REPEATED_REQUEST, GUARD, detail, offending)
    records = {name: record.id for name, record in resolved.items()}
    if family is not None and spec.family_field is not None:
        records[spec.family_field] = family.name
    return ApprovedCall(call.id, spec.name, validated, records, resolved, signature, family)


def _reused_id(call: ToolCall, signature: str, seen_ids: Mapping[str, str]) -> Refusal | None:
    """A call id used before (in the run or the batch) for a call with another signature."""
    earlier = seen_ids.get(call.id)
    if earlier is None or earlier == signature:
        return None
    detail = f"call id {call.id!r} was already used for another call"
    return Refusal(RefusalCode.DUPLICATE_CALL_ID, GUARD, detail, call.model_dump())


def _hooked(approved: ApprovedCall, call: ToolCall, ctx: GuardContext) -> ApprovedCall | Refusal:
    """The call, unless a pre-call hook blocks it (a refusal owned by `hook:<name>`)."""
    if not ctx.hooks:
        return approved
    view = CallView(approved.name, frozen(approved.args), frozen(approved.records))
    run = RunView(ctx.scenario.id, ctx.turn, tuple(ctx.evidence_refs))
    blocked = pre_call_block(ctx.hooks, view, run)
    if blocked is None:
        return approved
    hook, reason = blocked
    return Refusal(RefusalCode.HOOK_BLOCKED, hook.owner, reason, call.model_dump())


def decide_after_people(
    summary: str, calls: list[dict[str, Any]], rejections: list[Refusal], ctx: GuardContext
) -> Decision:
    """Re-decide a batch after people decided on it: a rejection refuses it; otherwise the (possibly
    edited) calls pass every check again, with the calls a person approved no longer waiting."""
    if rejections:
        return _refused(ctx, rejections)
    tool_calls = [{"id": call["id"], "name": call["name"], "args": call["args"]} for call in calls]
    return decide({"summary": summary, "tool_calls": tool_calls}, ctx)


def call_signature(name: str, validated_args: Mapping[str, Any]) -> str:
    """Canonical text of a call: the same tool with the same validated arguments."""
    return json.dumps({"name": name, "args": validated_args}, sort_keys=True, separators=(",", ":"))


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
    if ctx.refused_choices + 1 > limit:
        return End(Status.REFUSAL_LIMIT, tuple(refusals))
    return Refused(tuple(refusals))


def _end(status: Status, code: RefusalCode, detail: str) -> End:
    return End(status, (Refusal(code, GUARD, detail),))


def recorded_decision(
    decision: Decision, turn: int, first_ref: int, summary: str
) -> RecordedDecision:
    """The decision as state records it. An approved batch's calls carry the evidence refs their
    receipts will have (from `first_ref` = the run's observations + 1, in call order) and the
    admitted records the executor reads; a batch waiting for people keeps the proposal's summary,
    with which it is decided again."""
    calls: list[RecordedCall] = []
    extra: dict[str, Any] = {}
    match decision:
        case Approved(calls=approved):
            calls = [
                call.recorded_to_run(f"{OBSERVATION}{first_ref + index}")
                for index, call in enumerate(approved)
            ]
        case NeedsApproval(calls=approved):
            calls = [call.recorded() for call in approved]
        case Delegate(tasks=tasks):
            extra["tasks"] = [
                {"order": index, **task.model_dump()} for index, task in enumerate(tasks)
            ]
        case Remember(note=note):
            extra["note"] = note
    status = decision.status if isinstance(decision, Stop | End) else None
    return cast(
        "RecordedDecision",
        {
            "turn": turn,
            "outcome": decision.outcome.value,
            "calls": calls,
            **extra,
            "status": status and status.value,
            "summary": summary,
        },
    )
