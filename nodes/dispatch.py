"""Approved calls to the executor: one sealed `execute` task per call (`Send`).

The guard's router sends them when the guard approves a batch, and again on resume for the calls
without a receipt (`graph.build.where_it_stood`), from the sealed decision in state. A task carries
the admitted records its call reads; a glob family's members are named by the digest of their
store item (`ledger.members`), never carried: the executor reads them there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langgraph.config import get_store
from langgraph.types import Send

from contract.shapes import ExecuteTask, RecordedCall
from contract.state import WarrantState
from ledger.integrity import run_scope, sealed_payload
from ledger.members import STORED, full_grant
from nodes.evidence import family_members


def execute_tasks(
    state: WarrantState, calls: list[RecordedCall], scope: str | None = None
) -> list[Send]:
    """One `execute` task per approved call, sealed for this run: the executor trusts what the
    seal covers (the call's validated arguments, its admitted records)."""
    grant, decision = state["grant"], state["decision"]
    scope = run_scope() if scope is None else scope
    records = _listed_records(grant, calls)
    return [
        Send(
            "execute",
            sealed_payload(
                "execute",
                dict(_execute_task(grant, records, decision["turn"], state["deadline_at"], call)),
                scope,
            ),
        )
        for call in calls
    ]


def _listed_records(grant: Mapping[str, Any], calls: list[RecordedCall]) -> Mapping[str, Any]:
    """The grant's records the calls' listed families may name: those in state, or, when a listed
    id is a glob's member, the grant as admitted (read back: `ledger.members`)."""
    listed = {record_id for call in calls for record_id in call.get("family", {}).get("ids", ())}
    records: Mapping[str, Any] = grant["records"]
    if listed <= records.keys():
        return records
    full: Mapping[str, Any] = full_grant(grant, get_store())["records"]
    return full


def _execute_task(
    grant: Mapping[str, Any],
    records: Mapping[str, Any],
    turn: int,
    deadline_at: float,
    call: RecordedCall,
) -> ExecuteTask:
    without_sources = {key: value for key, value in call.items() if key != "sources"}
    task: ExecuteTask = {
        "call": cast("RecordedCall", without_sources),
        "profile": grant["profile"],
        "manifest": grant["manifest"],
        "manifest_sha256": grant["manifest_sha256"],
        "records": call["sources"],
        "turn": turn,
        "deadline_at": deadline_at,
        "call_s": grant["budget"].get("call_s", 30),
        "hooks": grant.get("hooks", []),
        "redact": grant.get("redact", []),
    }
    if family := call.get("family"):
        stored = grant.get(STORED) or {}
        if (glob := family.get("glob")) in stored:
            task["members_digest"] = stored[glob]["members"]
        else:
            task["members"] = [records[record_id] for record_id in family_members(family, grant)]
    if tool := (grant.get("mcp_tools") or {}).get(call["name"]):
        server = next(server for server in grant["mcp"] if server["name"] == tool["server"])
        task["mcp"] = {"tool": tool, "server": server}
    return task
