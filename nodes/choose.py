"""The choose node: show the chooser a frozen view, record what it proposes, decide nothing."""

from __future__ import annotations

import functools
import json
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from contract.codes import EventKind
from contract.state import WarrantState
from contract.text import storable_text
from guards.action import MAX_DOCUMENT_CHARS, shape_problem
from guards.budget import BudgetLeft
from guards.recall import catalog_entry
from ledger.context import WarrantContext, context_of, event, now, store_of
from ledger.integrity import run_scope
from ledger.members import full_grant
from ledger.read import without_seal
from ledger.record import RunRecord
from ledger.store import EVIDENCE, HANDOFFS, RECALLED, cursor_of, left_at
from nodes.choosers import chooser_for
from nodes.choosers.view import ChooserView, Proposal, make_view
from nodes.memory import shown_notes
from nodes.model import MODEL_KINDS, prepare
from nodes.unknowns import unknowns_of
from scenario.profiles import SHOWN_WITH_PDF_SPEC, SHOWN_WITH_RECORDS
from tools.catalog import describe, tools_of


def choose(state: WarrantState, runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    turn = state.get("turn", 0) + 1
    at = now(runtime)
    store = store_of(runtime)
    state = {**state, "grant": full_grant(state["grant"], store)}  # its members read back
    view = view_of(state, turn, at, store, run_scope())
    if state["chooser"].partition(":")[0] in MODEL_KINDS:
        return prepare(view, state, at, store)
    chooser = chooser_for(state["chooser"], state["grant"]["script"], context_of(runtime).choosers)
    raw = recordable(chooser.choose(view))
    proposal = {"turn": turn, "actor": chooser.actor, "raw": raw}
    return {
        "turn": turn,
        "proposal": proposal,
        "events": [event(EventKind.PROPOSED, turn, chooser.actor, at, raw=raw)],
    }


def view_of(state: WarrantState, turn: int, at: float, store: BaseStore, scope: str) -> ChooserView:
    """The chooser's view, read from the grant pinned at admission (already validated there; its
    members read back: `ledger.members.full_grant`) and from the run's record, which is read only
    if the chooser looks at it."""
    grant = state["grant"]
    cursor = cursor_of(state)

    @functools.cache
    def record() -> dict[str, Any]:
        run = RunRecord(store, scope)
        evidence = without_seal(run.sealed_or_not(run.evidence(cursor), EVIDENCE)[0])
        received = run.sealed_or_not(run.handoffs(cursor), HANDOFFS)[0]
        notes = run.sealed_or_not(run.recalled(cursor), RECALLED)[0]
        return {
            "notes": shown_notes(store, without_seal(notes)),
            "evidence": evidence,
            "refusals": without_seal(state.get("refusals", [])),
            "unknowns": unknowns_of(state, evidence),
            "handoffs": without_seal(received),
        }

    families, listed_apart = _families(grant)
    return make_view(
        scenario=grant["id"],
        goal=state["goal"],
        turn=turn,
        budget_left=_shown(left_at(state, turn, at)),
        catalog=[
            *_catalog(grant),
            *([catalog_entry()] if grant.get("memory") else []),
        ],
        records=[
            {"id": record["id"], "kind": record["kind"]}
            for record_id, record in grant["records"].items()
            if record_id not in listed_apart
        ],
        families=families,
        record=record,
        delegation=_delegation(grant, state.get("depth", 0)),
        skills=grant.get("skills", ()),
        memory=bool(grant.get("memory")),
    )


LISTED_FAMILY = 20
"""A family of more members than this is shown to a chooser as one entry, not member by member."""


def _catalog(grant: dict[str, Any]) -> list[dict[str, Any]]:
    """The profile's catalog, less the tools whose records the manifest does not approve: its
    family tools without a family (a chooser names a family by its glob), a tool of a kind in
    `SHOWN_WITH_RECORDS` without a record of that kind, its PDF tools without a PDF spec; then the
    admitted MCP tools, as pinned (`server.tool`, the description and input schema their pins
    cover; what a server offers beyond them is never shown)."""
    records = grant["records"].values()
    kinds = {record["kind"] for record in records}
    has_pdf = any(record.get("media") == "pdf" for record in records)
    hidden = {
        spec.name
        for spec in tools_of(grant["profile"]).values()
        if (spec.record_kind in SHOWN_WITH_RECORDS and spec.record_kind not in kinds)
        or (spec.name in SHOWN_WITH_PDF_SPEC and not has_pdf)
        or (
            not grant.get("families")
            and spec.family_field
            and spec.family_field not in spec.optional_records
        )
    }
    shown = [entry for entry in describe(grant["profile"]) if entry["name"] not in hidden]
    mcp = [
        {"name": name, "description": tool["description"], "args": tool["input_schema"]}
        | ({"flags": list(tool["flags"])} if tool.get("flags") else {})
        for name, tool in sorted((grant.get("mcp_tools") or {}).items())
    ]
    return [*shown, *mcp]


def _families(grant: dict[str, Any]) -> tuple[list[dict[str, Any]], set[str]]:
    """The grant's families as a chooser is shown them (glob, kind, member count, first and last
    member), and the members of those too large to list one by one."""
    shown, apart = [], set()
    for glob, ids in (grant.get("families") or {}).items():
        kind = grant["records"][ids[0]]["kind"]
        shown.append(
            {"glob": glob, "kind": kind, "members": len(ids), "first": ids[0], "last": ids[-1]}
        )
        if len(ids) > LISTED_FAMILY:
            apart.update(ids)
    return shown, apart


def _delegation(grant: dict[str, Any], depth: int) -> dict[str, Any] | None:
    """What the chooser may delegate, or None (the guard decides either way)."""
    children = grant.get("children") or {}
    if depth >= children.get("depth", 0):
        return None
    return {"max_tasks": children["max"]}


_SERIALIZER = JsonPlusSerializer()


def recordable(raw: Proposal) -> Any:
    """The proposal exactly as the guard will see it, also after a resume: JSON data, or JSON text
    when the data would not survive the checkpoint serializer unchanged (integers beyond 64 bits,
    lone surrogates). The guard parses both the same way; what is not JSON at all is recorded as
    text for the guard to refuse."""
    if isinstance(raw, str):
        return storable_text(raw)
    if shape_problem(raw):  # too deep or wide to walk safely: the guard refuses it as text
        return storable_text(repr(raw)[:MAX_DOCUMENT_CHARS])
    try:
        text = json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return repr(raw)[:4096]
    data = json.loads(text)
    try:
        survives = _SERIALIZER.loads_typed(_SERIALIZER.dumps_typed(data)) == data
    except (TypeError, ValueError, UnicodeError):
        survives = False
    return data if survives else text


def _shown(left: BudgetLeft) -> dict[str, float]:
    """The budget left as a chooser sees it: no negative seconds."""
    return {"steps": left.steps, "evidence": left.evidence, "seconds": max(0.0, left.seconds)}
