"""Where a stored run stands: its graph opened for reading, its outcome (state, what waits, its
children's model attempts), and the errors a run's storage and requests fail with."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from langgraph.types import StateSnapshot

from contract.codes import Status
from contract.errors import ErrorKind, WarrantError
from graph.build import compile_graph, store_of
from graph.governed import Graph, as_state
from graph.runs.interactions import pending_of
from graph.runs.lanes import Lane, child_lanes
from ledger.integrity import TAMPERED, handover_is_sealed
from ledger.persistence.locations import shown_db
from ledger.persistence.savers import StorageUnavailable, open_saver
from ledger.read import sealed_or_not
from ledger.record import RunRecord
from ledger.store import EVIDENCE
from nodes.handover import admitted_payload, build_handover, trusted_view
from nodes.memory import shown_notes
from nodes.model import MODEL_KINDS
from nodes.reports import handover_with_reports, with_reports

STORAGE_ERRORS = (sqlite3.Error, psycopg.OperationalError, psycopg.InterfaceError)


class RunError(WarrantError):
    """A run that cannot start or continue, by kind (`contract.errors.ErrorKind`); the command line
    says which exit code each kind is."""


@dataclass(frozen=True)
class RunResult:
    """Where a run stands after being advanced: its state and what waits for a person."""

    values: dict[str, Any]
    pending: list[dict[str, Any]]
    thread: str
    lane_calls: list[dict[str, Any]] = field(default_factory=list)
    """The model attempts of the run's children, each with its `lane` (model runs only): with
    `values["model_calls"]`, what a cassette records."""

    @property
    def handover(self) -> dict[str, Any]:
        """The handover, or the handover so far (`awaiting_human`) with the pending interactions;
        only from values the run wrote itself (a handover it did not write is shown as what the
        run's own values say, `state_tampered`, until `resume` records it)."""
        if self.pending or not handover_is_sealed(self.values, self.thread):
            status = Status.AWAITING_HUMAN.value if self.pending else TAMPERED
            own = sealed_or_not(self.values.get("evidence", []), self.thread, EVIDENCE)[0]
            shown = trusted_view(as_state(self.values), self.thread, self.admitted)
            shown["status"] = status
            return {
                **build_handover(shown, self.thread, own),
                **self._notes_now(),
                "pending": self.pending,
            }
        report = handover_with_reports(self.values["handover"], self.values.get("evidence") or [])
        return {**report, **self._notes_now(), "pending": []}

    def _notes_now(self) -> dict[str, Any]:
        """The recalled notes as they may be shown now: with their text, or marked forgotten (the
        stored report keeps no note's text)."""
        return {"memory": self.values["memory"]} if self.values.get("memory") else {}

    @property
    def ended(self) -> bool:
        """The run has sealed its handover: nothing more of it will run."""
        return "handover" in self.values and handover_is_sealed(self.values, self.thread)

    @property
    def admitted(self) -> dict[str, Any]:
        """The payload of the run's own `admitted` event (its first), or nothing."""
        return admitted_payload(next(iter(self.values.get("events") or []), None), self.thread)


@contextmanager
def reading_graph(db: str) -> Iterator[Graph]:
    try:
        with open_saver(db) as storage:
            yield compile_graph(*storage)
    except StorageUnavailable as exc:
        raise RunError(ErrorKind.UNREACHABLE, str(exc)) from None
    except STORAGE_ERRORS as exc:
        raise RunError(ErrorKind.UNREACHABLE, f"storage failed: {exc}") from None


def run_result(graph: Graph, config: RunnableConfig, lane_calls: bool = False) -> RunResult:
    """Where the run stands: its state, with its record read back from the store; with
    `lane_calls`, its children's model attempts too (read only for a cassette: a child's record is
    read lane by lane)."""
    snapshot = graph.get_state(config)
    thread = str(config["configurable"]["thread_id"])
    store = store_of(graph)
    values = with_reports(
        store, RunRecord(store, thread).materialized(snapshot.values, shown_notes)
    )
    pending = [interaction for _, interaction in pending_of(snapshot)]
    children = _lane_calls(store_of(graph), thread, values) if lane_calls else []
    return RunResult(values, pending, thread, children)


def _lane_calls(store: BaseStore, thread: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The model attempts of the finished children of a model run, lane by lane."""
    if (
        not values.get("delegated")
        or values.get("chooser", "").partition(":")[0] not in MODEL_KINDS
    ):
        return []
    return [
        {**call, "lane": lane.name}
        for lane in child_lanes(store, thread, values)
        if lane.cursor is not None
        for call in RunRecord(store, lane.scope).model_calls(lane.cursor)
    ]


def lanes_of(db: str, thread_id: str) -> list[Lane]:
    """The child lanes of a run (`graph.runs.lanes`)."""
    with reading_graph(db) as graph:
        values = RunRecord(store_of(graph), thread_id).materialized(
            graph.get_state(config_of(thread_id)).values, shown_notes
        )
        return child_lanes(store_of(graph), thread_id, values)


def has_run(snapshot: StateSnapshot) -> bool:
    """The thread holds a run's input (a worker killed while saving its first checkpoint leaves
    only the empty values of the list channels: no run, and the same request starts it)."""
    return has_run_values(snapshot.values)


def has_run_values(values: dict[str, Any]) -> bool:
    return "scenario" in values


def config_of(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def stored_run(db: str, thread_id: str) -> RunResult:
    """Where a stored run stands; no run on that thread is a `RunError` (`ErrorKind.NOT_FOUND`)."""
    with reading_graph(db) as graph:
        result = run_result(graph, config_of(thread_id))
    if not has_run_values(result.values):
        raise RunError(
            ErrorKind.NOT_FOUND, f"no run with thread id {thread_id!r} in {shown_db(db)}"
        )
    return result
