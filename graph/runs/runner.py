"""Advancing runs: starting, continuing and resuming each under its lease, streaming its ledger
entries as they are committed, mapping failures to `RunError`, and telling the caller when a run
has ended (`OnEnd`: the run library itself publishes nothing).

Every advance of a thread happens under its lease (`ledger.persistence.savers.open_run`) with
`durability="sync"`, so each superstep is durable before the next one starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from langgraph.types import Command, StateSnapshot

from contract.errors import ErrorKind
from contract.state import RunInput
from graph.build import compile_graph, store_of, where_it_stood
from graph.governed import Graph, as_state
from graph.present.langsmith_tracing import langsmith_context
from graph.runs.interactions import InteractionError, expiry_command, resume_command
from graph.runs.lanes import child_lanes
from graph.runs.reading import STORAGE_ERRORS, RunError, RunResult, config_of, has_run, run_result
from graph.runs.requests import RunRequest
from ledger.context import WarrantContext
from ledger.integrity import child_scope, handover_is_sealed, out_of_step, unsealed_fields
from ledger.persistence.locations import shown_db
from ledger.persistence.savers import RunBusy, StorageUnavailable, is_fenced_out, open_run
from ledger.record import RunRecord
from ledger.store import cursor_of
from nodes.admit import request_digest
from nodes.choosers import ChooserError
from nodes.memory import shown_notes

OnEvent = Callable[[dict[str, Any]], None]
"""Told each ledger entry as it is committed, and (type `PROGRESS`) a long call's progress."""
PROGRESS = "progress"
"""The type of what `OnEvent` is told of a family call's progress: never a ledger entry."""
Reply = Callable[[str], dict[str, Any]]
"""Builds a reply body for an interaction of the given kind (`question` or `approval`)."""
OnEnd = Callable[[BaseStore, RunResult], None]
"""Told a run's outcome, with the store that holds its record, when `start` or `resume` leaves it
ended: the faces pass `graph.delivery.artifacts.deliver`, which publishes its artifacts."""


@contextmanager
def leased_graph(db: str, thread_id: str) -> Iterator[Graph]:
    """The graph compiled with a checkpointer that holds the thread's lease."""
    try:
        with open_run(db, thread_id) as storage:
            yield compile_graph(*storage)
    except RunBusy as exc:
        raise RunError(ErrorKind.BUSY, str(exc)) from None
    except StorageUnavailable as exc:
        raise RunError(ErrorKind.UNREACHABLE, str(exc)) from None


def start(
    request: RunRequest,
    db: str,
    on_event: OnEvent,
    lane_calls: bool = False,
    context: WarrantContext | None = None,
    on_end: OnEnd | None = None,
) -> RunResult:
    """Run a new request to its end; a known message id continues or returns its run instead.
    `lane_calls`: the outcome holds the children's model attempts (`outcome`); `context`: the
    run's clock and embedded choosers (`WarrantContext`; the real clock by default); `on_end`:
    told the outcome if the run has ended."""
    config = config_of(request.thread_id)
    with leased_graph(db, request.thread_id) as graph:
        snapshot = graph.get_state(config)
        values = snapshot.values if has_run(snapshot) else {}
        if values and not request.message_id:
            raise RunError(
                ErrorKind.CONFLICT,
                f"thread {request.thread_id!r} already has a run; see `warrant show {request.thread_id}`",
            )
        if values and stored_digest(values) != request.digest:
            raise RunError(
                ErrorKind.CONFLICT,
                f"identity conflict: message id {request.message_id!r} was used for a different request",
            )
        if not values:
            advance(graph, request.as_input(), config, request.thread_id, on_event, context)
        elif is_unfinished(snapshot):
            carry_on(graph, config, request.thread_id, on_event, context)
        return told_end(graph, run_result(graph, config, lane_calls), on_end)


def stored_digest(values: dict[str, Any]) -> str:
    """The digest of the request a thread holds: pinned at admission, or, for a run stopped
    before admission finished, that of the input as it was saved."""
    if "request_sha256" in values:
        return str(values["request_sha256"])
    scenario, goal, chooser = (values.get(name) for name in ("scenario", "goal", "chooser"))
    if isinstance(scenario, str) and isinstance(goal, str) and isinstance(chooser, str):
        return request_digest(scenario, goal, chooser)
    return ""


def resume(
    thread_id: str,
    db: str,
    on_event: OnEvent,
    reply: Reply | None = None,
    interaction_id: str | None = None,
    lane_calls: bool = False,
    context: WarrantContext | None = None,
    on_end: OnEnd | None = None,
) -> RunResult:
    """Continue a run from its last checkpoint (completed calls never run again), delivering a
    person's reply to the named or the only pending interaction; without a reply, interactions
    past their reply time expire and the run goes on. `context`: the clock that says which have
    expired and that the run goes on with (a test's fake one; the real one by default); `on_end`:
    as `start`'s."""
    context = context or WarrantContext()
    config = config_of(thread_id)
    with leased_graph(db, thread_id) as graph:
        snapshot = graph.get_state(config)
        if not has_run(snapshot):
            raise RunError(
                ErrorKind.NOT_FOUND, f"no run with thread id {thread_id!r} in {shown_db(db)}"
            )
        if reply is not None:
            try:
                command = resume_command(snapshot, reply, interaction_id)
            except InteractionError as exc:
                raise RunError(ErrorKind.REPLY_REFUSED, str(exc)) from None
            advance(graph, command, config, thread_id, on_event, context)
        elif is_unfinished(snapshot):
            carry_on(graph, config, thread_id, on_event, context)
        elif expired := expiry_command(snapshot, context.clock()):  # nobody replied in time
            advance(graph, expired, config, thread_id, on_event, context)
        return told_end(graph, run_result(graph, config, lane_calls), on_end)


def told_end(graph: Graph, result: RunResult, on_end: OnEnd | None) -> RunResult:
    """The run's outcome, told to `on_end` first if the run has ended."""
    if on_end is not None and result.ended:
        on_end(store_of(graph), result)
    return result


def is_unfinished(snapshot: StateSnapshot) -> bool:
    """The run stopped before its handover (a crash, a lost connection), not waiting for a person.

    Judged from what the run has written, not from `snapshot.next`: a worker killed after its
    tasks' writes were saved but before the next checkpoint leaves `next` empty, and continuing
    (`invoke(None)`) still finishes it."""
    thread = str(snapshot.config["configurable"]["thread_id"])
    finished = handover_is_sealed(snapshot.values, thread)
    return has_run(snapshot) and not finished and not snapshot.interrupts


def carry_on(
    graph: Graph,
    config: RunnableConfig,
    thread_id: str,
    on_event: OnEvent,
    context: WarrantContext | None = None,
) -> None:
    """Finish a run that stopped before its handover. A state that schedules nothing further was
    last written by someone other than the run's nodes: if it holds values the run did not
    write, the handover records them; otherwise the run takes the step it was about to take (a
    person it was asking is asked again)."""
    advance(graph, None, config, thread_id, on_event, context)
    snapshot = graph.get_state(config)
    if is_unfinished(snapshot) and not snapshot.next:
        advance(
            graph,
            Command(goto=next_step(snapshot.values, thread_id)),
            config,
            thread_id,
            on_event,
            context,
        )


def next_step(values: dict[str, Any], thread_id: str) -> Any:
    """Where a run goes on when nothing is scheduled: to its handover if it holds values it did
    not write; to the guard if people are still to be asked (the guard asks them, from inside the
    run, so that their interrupts are kept); else the step it was about to take."""
    if unsealed_fields(values, thread_id) or out_of_step(values):
        return "handover"
    step = where_it_stood(as_state(values), thread_id)
    if isinstance(step, list) and any(task.node == "human" for task in step):
        return "guard"
    return step


def advance(
    graph: Graph,
    run_input: RunInput | Command[str] | None,
    config: RunnableConfig,
    thread_id: str,
    on_event: OnEvent,
    context: WarrantContext | None = None,
) -> None:
    """Stream the run, reporting each ledger entry as it is committed; storage loss mid-run is
    `ErrorKind.UNREACHABLE`, resumable. `context`: the run's clock (`WarrantContext`; the real one by default)."""
    try:
        reporter = Reporter.at(graph, thread_id, on_event)
        with langsmith_context(thread_id, run_input):
            parts = graph.stream(
                run_input,
                config,
                stream_mode=["updates", "custom"],
                durability="sync",
                context=context or WarrantContext(),
                subgraphs=True,
            )
            # With `subgraphs` and two modes, a part is (namespace, mode, data): an update is
            # {node: update}, a custom part what a node wrote (a family call's progress).
            typed = cast(Iterator[tuple[tuple[str, ...], str, dict[str, Any]]], parts)
            for namespace, mode, update in typed:
                if mode == "custom":
                    if "progress" in update:
                        reporter.progress(namespace, update["progress"])
                    continue
                for node_update in update.values():
                    # an interrupt arrives as a tuple, not an update
                    cursor = node_update.get("cursor") if isinstance(node_update, dict) else None
                    if cursor:
                        reporter.report(namespace, cursor)
    except ChooserError as exc:
        raise RunError(
            ErrorKind.UNREACHABLE,
            f"chooser unavailable: {exc}; resume with `warrant resume {thread_id}`",
        ) from None
    except STORAGE_ERRORS as exc:
        if is_fenced_out(exc):
            raise RunError(
                ErrorKind.CONFLICT,
                f"run {thread_id!r} was advanced by another worker meanwhile; nothing of this"
                f" attempt was kept: see `warrant show {thread_id}`",
            ) from None
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RunError(
            ErrorKind.UNREACHABLE,
            f"storage failed: {detail}; resume with `warrant resume {thread_id}`",
        ) from None


@dataclass
class Reporter:
    """Reports each ledger entry once as it is committed, main's and its children's (each
    child's with its lane), from the cursors the streamed updates carry."""

    graph: Graph
    thread: str
    on_event: OnEvent
    reported: dict[str, int]
    """Scope → events reported (or committed before this advance began)."""
    lanes: dict[tuple[str, ...], str]
    """A streamed namespace → its child's lane (`""` for main)."""

    @classmethod
    def at(cls, graph: Graph, thread: str, on_event: OnEvent) -> Reporter:
        values = RunRecord(store_of(graph), thread).materialized(
            graph.get_state(config_of(thread)).values, shown_notes
        )
        reported = {thread: cursor_of(values)["events"]}
        reported |= {
            lane.scope: len(lane.events) for lane in child_lanes(store_of(graph), thread, values)
        }
        return cls(graph, thread, on_event, reported, {(): ""})

    def report(self, namespace: tuple[str, ...], cursor: dict[str, Any]) -> None:
        lane = self._lane(namespace)
        scope = child_scope(self.thread, lane)
        before = self.reported.get(scope, 0)
        for event in RunRecord(store_of(self.graph), scope).new_events(before, cursor):
            self.on_event({**event, "lane": lane} if lane else event)
        self.reported[scope] = max(before, cursor["events"])

    def progress(self, namespace: tuple[str, ...], told: dict[str, Any]) -> None:
        """A family call's progress, as an event of type `progress` that no ledger holds."""
        lane = self._lane(namespace) if namespace else ""
        shown = {"type": PROGRESS, "turn": told.get("turn", 0), "payload": told}
        self.on_event({**shown, "lane": lane} if lane else shown)

    def _lane(self, namespace: tuple[str, ...]) -> str:
        if namespace not in self.lanes:
            config: RunnableConfig = {
                "configurable": {"thread_id": self.thread, "checkpoint_ns": "|".join(namespace)}
            }
            child = self.graph.get_state(config).values.get("child") or {}
            self.lanes[namespace] = str(child.get("lane", "?"))
        return self.lanes[namespace]
