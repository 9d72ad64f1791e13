"""The guard's per-call checks, one function each, in the order they run (`CALL_CHECKS`).

A call passes them one after the other; the first that fails refuses it. Each check takes what
the checks before it found (`Checking`) and what the call is checked against (`Batch`), and gives
either the call with what it found added or its refusal — so a kernel rule is one function and
one entry of the tuple. The arguments are validated once, before any check, by the tool's strict
model (`parse_proposal`); the `arguments` check only reads that result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, cast

from pydantic import ValidationError

from contract.codes import Owner
from contract.errors import RecordRefusal
from contract.text import describe_validation_error
from guards.action import ActionDocument, ToolCall, parse_action
from guards.decision import ApprovedCall
from guards.hooks import CallView, Hook, RunView, frozen, pre_call_block
from guards.provenance import local_egress
from guards.recall import RECALL, RecallArgs, query_key, recall_args
from guards.receipts import Receipts
from guards.refusals import Refusal, RefusalCode, tool_owner
from scenario.manifest import RecordKind
from scenario.registry import Family, Record, Scenario
from tools.args import EVERY, ToolArgs
from tools.catalog import ToolSpec, tools_of
from tools.mcp.arguments import McpArgs, checked_args


def call_signature(name: str, validated_args: Mapping[str, Any]) -> str:
    """Canonical text of a call: the same tool with the same validated arguments."""
    return json.dumps({"name": name, "args": validated_args}, sort_keys=True, separators=(",", ":"))


def mcp_schemas(scenario: Scenario) -> dict[str, dict[str, Any]]:
    """`server.tool` → the input schema pinned at admission, for each admitted MCP tool."""
    return {name: tool.input_schema for name, tool in scenario.mcp_tools.items()}


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


@dataclass(frozen=True)
class Batch:
    """What each call of a batch is checked against: the grant, and the calls seen before it
    (`seen`: the run's receipts and the batch's calls approved before it)."""

    scenario: Scenario
    catalog: Mapping[str, ToolSpec]
    seen: Receipts
    surface: frozenset[str] | None = None
    local_read: frozenset[str] = frozenset()
    hooks: tuple[Hook, ...] = ()
    turn: int = 0
    evidence_refs: Collection[str] = frozenset()


@dataclass(frozen=True)
class Checking:
    """One call on its way through the checks, with what those it passed found."""

    call: ToolCall
    args: ToolArgs | Refusal | None
    mcp: bool = False
    """An admitted MCP tool's call: it reads no record of the grant."""
    name: str = ""
    validated: dict[str, Any] = field(default_factory=dict)
    signature: str = ""
    resolved: dict[str, Record] = field(default_factory=dict)
    records: dict[str, str] = field(default_factory=dict)
    family: Family | None = None

    def refused(self, code: RefusalCode, detail: str, owner: str = Owner.GUARD) -> Refusal:
        return Refusal(code, owner, detail, self.call.model_dump())

    def approved(self) -> ApprovedCall:
        return ApprovedCall(
            self.call.id,
            self.name,
            self.validated,
            self.records,
            self.resolved,
            self.signature,
            self.family,
        )


Check = Callable[[Checking, Batch], Checking | Refusal]


def in_surface(call: Checking, batch: Batch) -> Checking | Refusal:
    """A tool the model's request did not show is not called."""
    if batch.surface is None or call.call.name in batch.surface:
        return call
    detail = (
        f"{call.call.name[:64]!r} was not among the tools the model's request showed"
        " (its manifest's tools): a tool not shown is not called"
    )
    return call.refused(RefusalCode.UNKNOWN_TOOL, detail)


def in_catalog(call: Checking, batch: Batch) -> Checking | Refusal:
    """A tool of the profile, or an MCP tool the grant admitted."""
    name = call.call.name
    if name in batch.scenario.mcp_tools and name not in batch.catalog:
        return replace(call, mcp=True)
    if name not in batch.catalog or call.args is None:
        detail = f"{name[:64]!r} is not a tool of the {batch.scenario.profile} profile"
        return call.refused(RefusalCode.UNKNOWN_TOOL, detail)
    return call


def arguments(call: Checking, batch: Batch) -> Checking | Refusal:
    """The arguments as the tool's strict model (or the MCP tool's pinned schema) took them."""
    args = call.args
    if isinstance(args, Refusal):
        return args
    if call.mcp:
        if not isinstance(args, McpArgs):
            detail = f"{call.call.name[:64]!r}: arguments not checked against its schema"
            return call.refused(RefusalCode.INVALID_ARGUMENT, detail)
        name, validated = call.call.name, dict(args.values)
    else:
        validated = cast("ToolArgs", args).model_dump()  # `in_catalog` refused None
        name = batch.catalog[call.call.name].name
    signature = call_signature(name, validated)
    return replace(call, name=name, validated=validated, signature=signature)


def egress(call: Checking, batch: Batch) -> Checking | Refusal:
    """An MCP call to a remote server once the run was shown local content (its arguments
    carry it) is refused."""
    if not call.mcp:
        return call
    tool = batch.scenario.mcp_tools[call.name]
    if leaked := local_egress(tool.server, tool.locality, batch.local_read):
        return call.refused(RefusalCode.LOCAL_DATA, f"{call.name}: {leaked}")
    return call


def call_identity(call: Checking, batch: Batch) -> Checking | Refusal:
    """A call id used before belongs to that call alone."""
    return reused_id(call.call, call.signature, batch.seen) or call


def records(call: Checking, batch: Batch) -> Checking | Refusal:
    """The exact record ids (tables, family) the call names, each in the scenario's registry."""
    if call.mcp:
        return call
    spec, validated, scenario = batch.catalog[call.call.name], call.validated, batch.scenario
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
        if spec.every_record is not None:
            for record in every_record(scenario, spec.every_record, spec.name):
                resolved[f"{EVERY}.{record.id}"] = record
    except RecordRefusal as refusal:
        return call.refused(refusal.code, refusal.detail, tool_owner(spec.name))
    ids = {name: record.id for name, record in resolved.items()}
    if family is not None and spec.family_field is not None:
        ids[spec.family_field] = family.name
    return replace(call, resolved=resolved, records=ids, family=family)


def every_record(scenario: Scenario, kind: RecordKind, tool: str) -> list[Record]:
    """Every approved record of the kind, in the manifest's order; none is a refusal (the tool
    would read nothing, and its receipt would name no record)."""
    found = [record for record in scenario.records.values() if record.kind == kind]
    if not found:
        raise RecordRefusal(
            RefusalCode.UNAPPROVED_RECORD,
            f"scenario {scenario.id} approves no {kind} record: {tool} has nothing to read",
        )
    return found


def repetition(call: Checking, batch: Batch) -> Checking | Refusal:
    """The same call as one already requested in the run (or the batch) is not made again."""
    if batch.seen.has_signature(call.signature):
        detail = f"{call.name} with these arguments was already requested in this run"
        return call.refused(RefusalCode.REPEATED_REQUEST, detail)
    return call


def hooks(call: Checking, batch: Batch) -> Checking | Refusal:
    """The scenario's pre-call hooks may block an approved call (owner `hook:<name>`)."""
    if not batch.hooks:
        return call
    view = CallView(call.name, frozen(call.validated), frozen(call.records))
    run = RunView(batch.scenario.id, batch.turn, tuple(batch.evidence_refs))
    blocked = pre_call_block(batch.hooks, view, run)
    if blocked is None:
        return call
    hook, reason = blocked
    return call.refused(RefusalCode.HOOK_BLOCKED, reason, hook.owner)


class CallChecks(NamedTuple):
    """The per-call checks, in the order they run (`guards.decide`'s steps 5–9, then hooks)."""

    in_surface: Check
    in_catalog: Check
    arguments: Check
    egress: Check
    call_identity: Check
    records: Check
    repetition: Check
    hooks: Check


CALL_CHECKS = CallChecks(
    in_surface, in_catalog, arguments, egress, call_identity, records, repetition, hooks
)


def check_call(
    call: ToolCall, args: ToolArgs | Refusal | None, batch: Batch
) -> ApprovedCall | Refusal:
    """One call through every check, in order: approved, or the first check's refusal."""
    checking = Checking(call, args)
    for check in CALL_CHECKS:
        passed = check(checking, batch)
        if isinstance(passed, Refusal):
            return passed
        checking = passed
    return checking.approved()


def reused_id(call: ToolCall, signature: str, seen: Receipts) -> Refusal | None:
    """A call id used before (in the run or the batch) for a call with another signature."""
    earlier = seen.signature_of(call.id)
    if earlier is None or earlier == signature:
        return None
    detail = f"call id {call.id!r} was already used for another call"
    return Refusal(RefusalCode.DUPLICATE_CALL_ID, Owner.GUARD, detail, call.model_dump())


def check_recall(
    call: ToolCall, seen: Receipts, recalled: Callable[[str], bool]
) -> RecallArgs | Refusal:
    """One recall call, checked as a tool call is: its strict arguments, its id, repetition
    (`recalled`: whether this run or batch already recalled a query's words)."""
    args = recall_args(call)
    if isinstance(args, Refusal):
        return args
    key = query_key(args.query)
    if reused := reused_id(call, call_signature(RECALL, {"query": key}), seen):
        return reused
    if recalled(key):
        detail = f"recall of {args.query[:80]!r} was already made in this run"
        return Refusal(RefusalCode.REPEATED_REQUEST, Owner.GUARD, detail, call.model_dump())
    return args
