"""Run control from outside a run: a person's stop (`warrant stop`).

The stop is recorded where the run reads it (`nodes.control`); then, when no other process is
advancing the run, this one takes its lease and brings it to that safe point: a parked run's
interactions are withdrawn, a run cut short by a crash goes on until its guard takes the stop. A
run another process is advancing takes the stop at its next safe point there.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.types import Command

from graph.build import store_of
from graph.errors import ErrorKind
from graph.persistence.savers import shown_db
from graph.runs.interactions import pending_of
from graph.runs.runner import (
    OnEvent,
    Outcome,
    RunError,
    advance,
    carry_on,
    config_of,
    has_run,
    leased_graph,
    outcome,
    reading_graph,
)
from nodes.control import StopRequest, request_stop
from nodes.human import WITHDRAWN
from nodes.integrity import handover_is_sealed


@dataclass(frozen=True)
class Stopped:
    """What became of a stop: the run's outcome when this process brought it to its end, or
    None when another process is advancing it (it stops there, at its next safe point)."""

    thread: str
    outcome: Outcome | None


def stop(thread_id: str, db: str, request: StopRequest, on_event: OnEvent) -> Stopped:
    """Ask the run on `thread_id` to stop, and end it here when nobody else is advancing it."""
    config = config_of(thread_id)
    with reading_graph(db) as graph:
        snapshot = graph.get_state(config)
        if not has_run(snapshot):
            raise RunError(
                ErrorKind.NOT_FOUND, f"no run with thread id {thread_id!r} in {shown_db(db)}"
            )
        if handover_is_sealed(snapshot.values, thread_id):
            status = snapshot.values["handover"].get("status")
            raise RunError(
                ErrorKind.CONFLICT,
                f"run {thread_id!r} already ended ({status}): see `warrant show {thread_id}`",
            )
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
            return Stopped(thread_id, outcome(graph, config))
    except RunError as exc:
        if exc.kind is ErrorKind.BUSY:
            return Stopped(thread_id, None)
        raise
