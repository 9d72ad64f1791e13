"""The handover: evidence and unknowns for a person; never a root cause.

A chooser's stop text and hypotheses are shown as the chooser's statements, each citing existing
evidence; they are not findings, and the handover has no root-cause field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from contract.codes import EventKind, Owner
from contract.shapes import EvidenceItem, Handover
from contract.state import WarrantState
from guards.citations import Spot, bind_lines, citable_lines, shown_commits, shown_times
from guards.finalize import EndFacts, finalize
from guards.hooks import end_outcomes, scenario_hooks
from guards.parking import hard_end
from guards.seal import SEAL
from ledger.context import WarrantContext, event, now, store_of
from ledger.integrity import (
    TAMPERED,
    out_of_step,
    scope_in,
    tampering,
    thread_and_lane,
    trusted,
    trusted_turn,
    unsealed_fields,
)
from ledger.members import full_grant
from ledger.read import sealed_or_not
from ledger.record import RunRecord
from ledger.store import EVENTS, EVIDENCE, HANDOFFS, RECALLED, cursor_of
from nodes.continuation import publish_revision
from nodes.unknowns import NO_ROOT_CAUSE, unknowns_of
from nodes.watched import goal_message, handover_message
from scenario.registry import Scenario


def handover(
    state: WarrantState, config: RunnableConfig, runtime: Runtime[WarrantContext]
) -> dict[str, Any]:
    thread = scope_in(config["configurable"])  # a child's lane included: its record's scope
    store = store_of(runtime)
    at, turn = now(runtime), trusted_turn(state, thread)
    record = reported_record(store, thread, state)
    found = unsealed_fields(state, thread) or out_of_step(state, store, thread)
    found += ["evidence"] if record.foreign else []
    recorded: dict[str, Any] = (
        tampering("handover", found, turn, at) if found and not state.get("tampered") else {}
    )
    tampered = bool(found or state.get("tampered"))
    if tampered:
        state = {**trusted_view(state, thread, admitted_of(store, thread, state)), "turn": turn}
        state["refusals"] = [*state.get("refusals", []), *recorded.get("refusals", [])]
    if "grant" in state:  # its members read back (`ledger.members`): the unknowns name each
        state = {**state, "grant": full_grant(state["grant"], store)}
    final = finalize(end_facts(state, tampered, record.evidence, at))
    status = final.status.value
    report = build_handover(
        {**state, "status": status}, thread, record.evidence, record.handoffs, record.memory
    ) | {"ending": final.ending.value, "ending_reasons": list(final.reasons)}
    observed = _end_hooks(state, report, store, thread) if status != TAMPERED else []
    events = [
        *recorded.get("events", []),
        event(
            EventKind.STOPPED,
            turn,
            Owner.RUNTIME,
            at,
            status=status,
            text=state.get("stop_text", ""),
            ending=final.ending.value,
        ),
        event(
            EventKind.HANDOVER,
            turn,
            Owner.RUNTIME,
            at,
            evidence=len(report["evidence"]),
            refusals=len(report["refusals"]),
            revision=report["revision"],
            **({"report": report["report"]} if "report" in report else {}),
            **({"end_hooks": observed} if observed else {}),
        ),
    ]
    if "report" in report and status != TAMPERED:  # a continuation: its report's next revision
        publish_revision(store, report["report"], report["revision"], thread)
    messages = [goal_message(report["goal"]), handover_message(report)]
    return {
        **recorded,
        "status": status,
        "handover": report,
        "events": events,
        "messages": messages,
    }


def end_facts(
    state: WarrantState, tampered: bool, evidence: list[dict[str, Any]], at: float
) -> EndFacts:
    """What the run recorded that decides its end (`guards.finalize`)."""
    hard = hard_end(state["grant"]["budget"]) if state.get("grant") else None
    return EndFacts(
        asked=state.get("status"),
        stop_text=state.get("stop_text", ""),
        stopped_by=state.get("stopped_by"),
        tampered=tampered,
        hard_end_passed=hard is not None and at >= hard,
        evidence=unsealed(evidence),
    )


def _end_hooks(
    state: WarrantState, report: Handover, store: BaseStore, thread: str
) -> list[dict[str, str]]:
    """The scenario's end hooks, each on read-only copies of the handover and the ledger; what
    each did is recorded in the `handover` event, and nothing it returns is used. (A crash
    inside this node runs them again on resume.)"""
    hooks = scenario_hooks(Scenario.model_validate(state["grant"]))
    if not any(hook.when == "end" for hook in hooks):
        return []
    return end_outcomes(hooks, report, RunRecord(store, thread).events(cursor_of(state)))


@dataclass(frozen=True)
class ReportedRecord:
    """What the store holds of a run that a report shows: its sealed receipts (with their
    excerpts) and any receipts it did not write."""

    evidence: list[dict[str, Any]]
    foreign: list[dict[str, Any]]
    handoffs: list[dict[str, Any]]
    """The children's handoffs the run received (its own, sealed)."""
    memory: list[dict[str, Any]]
    """The notes the run recalled (its own, sealed): ids, versions, digests, never text."""


def reported_record(store: BaseStore, thread: str, state: WarrantState) -> ReportedRecord:
    cursor = cursor_of(trusted(state, thread))
    record = RunRecord(store, thread)
    own, foreign = record.sealed_or_not(record.evidence(cursor), EVIDENCE)
    received = record.sealed_or_not(record.handoffs(cursor), HANDOFFS)[0]
    notes = unsealed(record.sealed_or_not(record.recalled(cursor), RECALLED)[0])
    return ReportedRecord(own, foreign, received, notes)


def admitted_of(store: BaseStore, thread: str, state: WarrantState) -> dict[str, Any]:
    """The payload of the run's own `admitted` event: read only where a report needs it (its
    state was not all the run's own), for it lists every record, a family's members too."""
    counted = cursor_of(trusted(state, thread))["events"]
    first = RunRecord(store, thread).event_at(1) if counted else None
    return admitted_payload(first, thread)


def admitted_payload(first: dict[str, Any] | None, thread: str) -> dict[str, Any]:
    """The payload of a run's first event if it is the run's own `admitted` event, else nothing."""
    if first is None or not sealed_or_not([first], thread, EVENTS)[0]:
        return {}
    payload: dict[str, Any] = first.get("payload", {})
    return payload if first.get("type") == EventKind.ADMITTED else {}


def trusted_view(state: WarrantState, thread: str, admitted: dict[str, Any]) -> WarrantState:
    """Only what the run wrote itself; the grant and goal, if their fields were replaced, as the
    sealed ledger recorded them at admission (`admitted`: that event's payload)."""
    kept = cast(WarrantState, trusted(state, thread))  # values this run sealed: its nodes' own
    kept.setdefault("goal", admitted.get("goal", ""))
    kept.setdefault(
        "grant",
        {
            "id": admitted.get("scenario", "?"),
            "profile": admitted.get("profile"),
            "budget": admitted.get("budget", {}),
            "records": {record["id"]: record for record in admitted.get("records", [])},
        },
    )
    return kept


Item = TypeVar("Item", bound=Mapping[str, Any])


def unsealed(items: Iterable[Item]) -> list[Item]:
    """Items as a report shows them: their seals are the run's bookkeeping (no shape has a field
    for one), and the handover itself is sealed whole."""
    return [
        cast(Item, {key: value for key, value in item.items() if key != SEAL}) for item in items
    ]


def _recalled(note: dict[str, Any]) -> dict[str, Any]:
    """A recalled note as the report keeps it: which note and version, never its text, which is
    read from memory when the report is shown (`nodes.memory.shown_notes`), so that a note
    forgotten later is not kept here."""
    return {key: note[key] for key in ("ref", "note", "version", "sha256", "query", "turn")}


def skills_sent(state: WarrantState) -> list[dict[str, Any]]:
    """The skill versions that reached a model: every model request carries the grant's skills,
    so all of them once the run asked a model, none for a script or a file (they ignore skills)."""
    if not state.get("request"):
        return []
    return [
        {key: skill[key] for key in ("id", "version", "sha256")}
        for skill in state["grant"].get("skills", ())
    ]


def _lines_shown(evidence: Iterable[Mapping[str, Any]]) -> dict[str, list[Spot]]:
    """Each item's ref → the lines its excerpt shows that a line citation can open."""
    return {item["ref"]: citable_lines(item) for item in evidence}


def build_handover(
    state: WarrantState,
    thread_id: str,
    evidence: list[dict[str, Any]],
    children: list[dict[str, Any]] | None = None,
    memory: list[dict[str, Any]] | None = None,
) -> Handover:
    """The handover document (DESIGN §6) from a run's state, its evidence and its children's
    handoffs; pure. A child's statements stay in its handoff, marked as the child's: they are
    never the run's hypotheses."""
    grant = state["grant"]
    # The receipts as committed and read back (`ledger.read.evidence`): the run's evidence items.
    shown = cast(list[EvidenceItem], unsealed(evidence))
    thread, lane = thread_and_lane(thread_id)
    return {
        "thread_id": thread,
        **({"lane": lane} if lane else {}),
        "scenario": grant["id"],
        "goal": state["goal"],
        "status": state["status"],
        "turns": state.get("turn", 0),
        "budget": grant["budget"],
        "statement": NO_ROOT_CAUSE,
        "evidence": shown,
        "unknowns": unknowns_of(state, shown),
        "refusals": unsealed(state.get("refusals", [])),
        "hypotheses": bind_lines(
            state.get("hypotheses", []),
            _lines_shown(shown),
            {item["ref"]: shown_commits(item) for item in shown},
            {item["ref"]: shown_times(item) for item in shown},
        ),
        "chooser_stop_text": state.get("stop_text", ""),
        **({"stopped_by": state["stopped_by"]} if state.get("stopped_by") else {}),
        **({"children": unsealed(children)} if children else {}),
        **({"skills": skills} if (skills := skills_sent(state)) else {}),
        **({"memory": [_recalled(note) for note in memory]} if memory else {}),
        **({"remembered": state["remembered"]} if state.get("remembered") else {}),
        "revision": state.get("revision", 1),
        **({"parent": state["parent"], "report": state["report"]} if state.get("parent") else {}),
    }
