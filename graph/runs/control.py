"""Run control from outside a run: a person's stop (`warrant stop`) and correction (`warrant correct`).

The stop is recorded where the run reads it (`nodes.control`); then, when no other process is
advancing the run, this one takes its lease and brings it to that safe point: a parked run's
interactions are withdrawn, a run cut short by a crash goes on until its guard takes the stop. A
run another process is advancing takes the stop at its next safe point there.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.types import Command

from contract.errors import ErrorKind
from contract.text import storable_text
from graph.build import store_of
from graph.governed import Graph
from graph.runs.interactions import pending_of
from graph.runs.reading import RunError, RunResult, config_of, has_run, reading_graph, run_result
from graph.runs.runner import OnEvent, advance, carry_on, leased_graph
from guards.finalize import ended_as
from ledger.integrity import handover_is_sealed
from ledger.persistence.locations import shown_db
from nodes.control import (
    MAX_TEXT,
    Correction,
    CorrectionRefused,
    StopRequest,
    request_stop,
    save_correction,
)
from nodes.human import WITHDRAWN


@dataclass(frozen=True)
class Stopped:
    """What became of a stop: the run's outcome when this process brought it to its end, or
    None when another process is advancing it (it stops there, at its next safe point)."""

    thread: str
    outcome: RunResult | None


def stop_run(thread_id: str, db: str, request: StopRequest, on_event: OnEvent) -> Stopped:
    """Ask the run on `thread_id` to stop, and end it here when nobody else is advancing it."""
    config = config_of(thread_id)
    with reading_graph(db) as graph:
        _check_running(graph, thread_id, db)
        request_stop(store_of(graph), thread_id, request)
    try:
        with leased_graph(db, thread_id) as graph:
            snapshot = graph.get_state(config)
            if pending := pending_of(snapshot):
                withdrawn: Command[str] = Command(
                    resume={interrupt_id: WITHDRAWN for interrupt_id, _ in pending}
                )
                advance(graph, withdrawn, config, thread_id, on_event)
            elif not handover_is_sealed(snapshot.values, thread_id):
                carry_on(graph, config, thread_id, on_event)
            return Stopped(thread_id, run_result(graph, config))
    except RunError as exc:
        if exc.kind is ErrorKind.BUSY:
            return Stopped(thread_id, None)
        raise


def correct_run(thread_id: str, db: str, correction: Correction) -> int:
    """Save a person's correction for the run on `thread_id` to take in at its next turn, without
    its lease (the run may be advancing elsewhere); returns the correction's number."""
    if not correction["text"].strip():
        raise RunError(ErrorKind.BAD_INPUT, "the correction is empty")
    if len(correction["text"]) > MAX_TEXT:
        raise RunError(ErrorKind.BAD_INPUT, f"the correction is longer than {MAX_TEXT} characters")
    correction = correction | {"text": storable_text(correction["text"])}
    with reading_graph(db) as graph:
        _check_running(graph, thread_id, db)
        try:
            return save_correction(store_of(graph), thread_id, correction)
        except CorrectionRefused as exc:
            raise RunError(ErrorKind.CONFLICT, str(exc)) from None


def _check_running(graph: Graph, thread_id: str, db: str) -> None:
    """A run on `thread_id` that has not ended; a `RunError` otherwise."""
    snapshot = graph.get_state(config_of(thread_id))
    if not has_run(snapshot):
        raise RunError(
            ErrorKind.NOT_FOUND, f"no run with thread id {thread_id!r} in {shown_db(db)}"
        )
    if handover_is_sealed(snapshot.values, thread_id):
        ended = ended_as(snapshot.values["handover"])
        raise RunError(
            ErrorKind.CONFLICT,
            f"run {thread_id!r} already ended ({ended}): see `warrant show {thread_id}`",
        )
