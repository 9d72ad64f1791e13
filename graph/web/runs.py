"""What the web app shows of the runs in a store: the list, a run's handover (so far), and its
ledger events after a sequence number. Every read opens the store and closes it: the page's
live stream polls through here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.codes import Status
from graph.build import saver_of, store_of
from graph.delivery.artifacts import Published, deliver, published, shown_figures
from graph.delivery.html import ShownFigure
from graph.delivery.shares import shares_of
from graph.governed import as_state
from graph.present.render import event_summary
from graph.runs.reading import (
    RunResult,
    config_of,
    has_run_values,
    reading_graph,
    run_result,
)
from ledger.integrity import TAMPERED
from ledger.persistence.retention import thread_ids
from ledger.read import sealed_or_not
from ledger.record import RunRecord
from ledger.store import EVIDENCE, cursor_of
from nodes.handover import build_handover, trusted_view

RUNNING = "running"
"""A run that has not ended and waits for nobody: shown so, never as a `Status`."""


@dataclass(frozen=True)
class RunRow:
    thread: str
    scenario: str
    goal: str
    state: str
    """`running`, `awaiting_human`, or the handover's status."""
    turn: int
    events: int
    revision: int


@dataclass(frozen=True)
class RunPage:
    thread: str
    handover: dict[str, Any]
    state: str
    events: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    published: Published | None
    figures: list[ShownFigure]


def run_rows(db: str, only: frozenset[str] | None = None) -> list[RunRow]:
    """Every run of the store (or only the threads in `only`), newest thread name last."""
    rows = []
    with reading_graph(db) as graph:
        for thread in thread_ids(saver_of(graph)):
            if only is not None and thread not in only:
                continue
            snapshot = graph.get_state(config_of(thread))
            values = snapshot.values
            if not has_run_values(values):
                continue
            rows.append(
                RunRow(
                    thread,
                    str(values.get("grant", {}).get("id", "?")),
                    str(values.get("goal", "")),
                    _state(values, bool(snapshot.interrupts)),
                    int(values.get("turn", 0)),
                    cursor_of(values)["events"],
                    int(values.get("revision", 1)),
                )
            )
    return rows


def visible_threads(db: str, reader: str) -> frozenset[str]:
    """The runs a reader may see: those shared with them, and their own (a served run they
    started, or one whose artifacts they published)."""
    with reading_graph(db) as graph:
        store = store_of(graph)
        shared = {share.thread for share in shares_of(store, reader)}
        own = set()
        for thread in thread_ids(saver_of(graph)):
            values = graph.get_state(config_of(thread)).values
            index = published(store, thread)
            if values.get("started_by") == reader or (index is not None and index.owner == reader):
                own.add(thread)
    return frozenset(shared | own)


def run_page(db: str, thread: str, publisher: str) -> RunPage | None:
    """The run's page: its handover (so far), its events, what waits, its artifacts (published
    now, owned by `publisher` unless the run was served, if it has ended and they were not)."""
    with reading_graph(db) as graph:
        if (result := run_result(graph, config_of(thread))).ended:
            deliver(store_of(graph), result, publisher)
        if not has_run_values(result.values):
            return None
        index = published(store_of(graph), thread)
        figures = shown_figures(store_of(graph), index) if index is not None else []
    state = _state(result.values, bool(result.pending))
    handover = result.handover if state != RUNNING else so_far(result)
    events = [live_event(event) for event in result.values.get("events", [])]
    return RunPage(thread, handover, state, events, result.pending, index, figures)


def so_far(result: RunResult) -> dict[str, Any]:
    """The handover a running run would have now, from what it wrote itself."""
    own = sealed_or_not(result.values.get("evidence", []), result.thread, EVIDENCE)[0]
    shown = trusted_view(as_state(result.values), result.thread, result.admitted)
    shown["status"] = RUNNING
    return {**build_handover(shown, result.thread, own), "pending": []}


def events_after(db: str, thread: str, after: int) -> tuple[list[dict[str, Any]], bool]:
    """The run's ledger events numbered after `after`, and whether the run has ended."""
    with reading_graph(db) as graph:
        values = graph.get_state(config_of(thread)).values
        found = RunRecord(store_of(graph), thread).new_events(after, cursor_of(values))
    return [live_event(event) for event in found], "handover" in values


def live_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event as the page shows it: its number, type, turn, actor, time and one line."""
    return {
        "seq": event.get("seq", 0),
        "type": event.get("type", ""),
        "turn": event.get("turn", 0),
        "actor": event.get("actor", ""),
        "time": event.get("time", ""),
        "line": f"{event.get('type', '')} · turn {event.get('turn', 0)} · {event.get('actor', '')} · {event_summary(event)}",
    }


def _state(values: dict[str, Any], waiting: bool) -> str:
    if "handover" in values:
        return str(values["handover"].get("status", TAMPERED))
    return Status.AWAITING_HUMAN.value if waiting else RUNNING
