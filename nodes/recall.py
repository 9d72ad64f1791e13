"""Recall: the guard approved a look into the team's memory; this finds the notes and records them
as `M` refs, history beside the evidence, never part of it.

The run's record keeps a recalled note's id, version and sha256 only, never its text: the text is
read from memory each time it is shown (`shown_notes`), so a note forgotten later reaches no model
and no report again, whatever run recalled it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore

from contract.codes import RECOLLECTION, EventKind
from contract.state import WarrantState
from guards.recall import query_key
from ledger.context import event
from ledger.record import RunRecord
from ledger.store import RECALLED
from nodes import memory

ACTOR = "memory"


def scope_of(grant: Mapping[str, Any]) -> memory.Scope | None:
    """The project's shared notes, where a run's proposed notes are saved; None without memory."""
    found = grant.get("memory")
    return memory.Scope(found["project"]) if found else None


def scopes_of(grant: Mapping[str, Any]) -> list[memory.Scope]:
    """The notes a run may recall: the project's, and the manifest's user's own where it names one."""
    found = grant.get("memory")
    if not found:
        return []
    shared = memory.Scope(found["project"])
    return (
        [shared, memory.Scope(found["project"], found["user"])] if found.get("user") else [shared]
    )


def recall_update(
    store: BaseStore, state: WarrantState, scope: str, recalls: list[dict[str, Any]], at: float
) -> dict[str, Any]:
    """The notes each approved recall finds, as new M refs (a version recalled before keeps its
    ref), with one `recalled` event per call."""
    where = scopes_of(state["grant"])
    if not where:  # the guard refuses recall without memory; nothing to find
        return {}
    turn, cursor = state["turn"], state.get("cursor") or {}
    known = {
        (item["note"], item["version"]): item["ref"]
        for item in RunRecord(store, scope).recalled(cursor)
    }
    first = len(known) + 1
    items: list[dict[str, Any]] = []
    events = []
    for call in recalls:
        found = memory.recall(store, where, call["query"], call["limit"])
        refs = []
        for note in found:
            key = (note["id"], note["version"])
            if key not in known:
                known[key] = f"{RECOLLECTION}{first + len(items)}"
                items.append(
                    {
                        "ref": known[key],
                        "note": note["id"],
                        "version": note["version"],
                        "sha256": note["sha256"],
                        "project": note["project"],
                        "user": note["user"],
                        "call_id": call["id"],
                        "query": call["query"],
                        "turn": turn,
                    }
                )
            refs.append({"ref": known[key], "note": note["id"], "version": note["version"]})
        events.append(
            event(
                EventKind.RECALLED,
                turn,
                ACTOR,
                at,
                call_id=call["id"],
                query=call["query"],
                found=refs,
            )
        )
    queries = [query_key(call["query"]) for call in recalls]
    return {RECALLED: items, "events": events, "recalls": [*state.get("recalls", ()), *queries]}
