"""Starting, continuing and resuming runs: leases, message identity, streaming, failure mapping.

Every advance of a thread happens under its lease (`graph.persistence.savers.open_run`) with
`durability="sync"`, so each superstep is durable before the next one starts.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from langgraph.types import Command, StateSnapshot

from contract.codes import Status
from contract.state import RunInput
from graph.build import compile_graph, store_of, where_it_stood
from graph.errors import ErrorKind, KindedError
from graph.governed import Graph, as_state
from graph.persistence.locations import shown_db
from graph.persistence.savers import (
    RunBusy,
    StorageUnavailable,
    is_fenced_out,
    open_run,
    open_saver,
)
from graph.present.tracing import langsmith_context
from graph.runs.identity import thread_for_message
from graph.runs.interactions import (
    InteractionError,
    expiry_command,
    pending_of,
    resume_command,
)
from graph.runs.lanes import Lane, child_lanes
from guards.schedule import ScheduleLink
from lab import builtin_manifests
from nodes.admit import admission, request_digest
from nodes.choosers import ChooserError
from nodes.choosers.route import Route
from nodes.choosers.transport import probe
from nodes.context import WarrantContext
from nodes.continuation import NotContinuable, carried
from nodes.handover import admitted_payload, build_handover, trusted_view
from nodes.integrity import (
    TAMPERED,
    child_scope,
    handover_is_sealed,
    out_of_step,
    unsealed_fields,
)
from nodes.model import MODEL_KINDS
from nodes.record import (
    EVIDENCE,
    cursor_of,
    materialized,
    model_calls,
    new_events,
    sealed_or_not,
)
from nodes.reports import handover_with_reports, with_reports

OnEvent = Callable[[dict[str, Any]], None]
"""Told each ledger entry as it is committed, and (type `PROGRESS`) a long call's progress."""
PROGRESS = "progress"
"""The type of what `OnEvent` is told of a family call's progress: never a ledger entry."""
Reply = Callable[[str], dict[str, Any]]
"""Builds a reply body for an interaction of the given kind (`question` or `approval`)."""
STORAGE_ERRORS = (sqlite3.Error, psycopg.OperationalError, psycopg.InterfaceError)


class RunError(KindedError):
    """A run that cannot start or continue, by kind (`graph.errors.ErrorKind`); the command line
    says which exit code each kind is."""


@dataclass(frozen=True)
class Outcome:
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


OnEnd = Callable[[BaseStore, Outcome], None]
"""Told a run's outcome, with the store that holds its record, when `start` or `resume` leaves it
ended: the faces pass `graph.delivery.artifacts.deliver`, which publishes its artifacts."""


@dataclass(frozen=True)
class RunRequest:
    reference: str
    """A built-in id, or the manifest's absolute path."""
    goal: str
    chooser: str
    thread_id: str
    message_id: str | None
    parent: str | None = None
    """The finished run this one continues (`warrant continue`)."""
    schedule: ScheduleLink | None = None
    """The confirmed schedule this run is an occurrence of (`graph.runs.schedules`)."""

    @property
    def digest(self) -> str:
        return request_digest(self.reference, self.goal, self.chooser, self.parent)

    def as_input(self) -> RunInput:
        run_input: RunInput = {
            "scenario": self.reference,
            "goal": self.goal,
            "chooser": self.chooser,
        }
        if self.parent:
            run_input["parent"] = self.parent
        if self.message_id:
            run_input["message_id"] = self.message_id
        if self.schedule:
            run_input["schedule"] = dict(self.schedule)
        return run_input


def admit_request(
    scenario: str, goal: str | None, chooser: str, thread: str | None, message_id: str | None
) -> RunRequest:
    """Check a run request before anything starts; bad input is a `RunError` (`ErrorKind.BAD_INPUT`)."""
    return pinned_request(scenario, goal, chooser, thread, message_id)[0]


def pinned_request(
    scenario: str, goal: str | None, chooser: str, thread: str | None, message_id: str | None
) -> tuple[RunRequest, dict[str, Any]]:
    """`admit_request`, with what admission pinned (the grant with its manifest's sha256)."""
    if thread and message_id:
        raise RunError(
            ErrorKind.BAD_INPUT,
            "give --thread or --message-id, not both: the message id names the thread",
        )
    try:
        pinned = admission(scenario, goal, chooser)
    except ValueError as exc:
        raise RunError(ErrorKind.BAD_INPUT, str(exc)) from None
    if pinned["chooser"] == "model" and (
        unreachable := probe(Route.model_validate(pinned["route"]))
    ):
        raise RunError(ErrorKind.UNREACHABLE, unreachable)
    grant = pinned["grant"]
    builtin = grant["id"] in builtin_manifests() and scenario == grant["id"]
    thread_id = thread or (
        thread_for_message(message_id) if message_id else f"{grant['id']}-{secrets.token_hex(4)}"
    )
    request = RunRequest(
        grant["id"] if builtin else grant["manifest"],
        pinned["goal"],
        pinned["chooser"],
        thread_id,
        message_id,
    )
    return request, pinned


def continuation(
    parent: str,
    db: str,
    goal: str | None,
    chooser: str | None,
    thread: str | None,
    message_id: str | None,
) -> RunRequest:
    """The request continuing the finished run `parent`: its scenario, the goal and chooser given
    or its own, a fresh budget; a parent that is not a finished run is a `RunError`."""
    with reading_graph(db) as graph:
        values = graph.get_state(config_of(parent)).values
        if not has_run_values(values):
            raise RunError(
                ErrorKind.NOT_FOUND, f"no run with thread id {parent!r} in {shown_db(db)}"
            )
        try:
            carried(store_of(graph), parent, values["grant"]["manifest_sha256"])
        except NotContinuable as exc:
            raise RunError(
                ErrorKind.CONFLICT, f"{exc}; resume it instead (`warrant resume {parent}`)"
            ) from None
    request = admit_request(
        values["scenario"], goal or values["goal"], chooser or values["chooser"], thread, message_id
    )
    return replace(request, parent=parent)


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


@contextmanager
def reading_graph(db: str) -> Iterator[Graph]:
    try:
        with open_saver(db) as storage:
            yield compile_graph(*storage)
    except StorageUnavailable as exc:
        raise RunError(ErrorKind.UNREACHABLE, str(exc)) from None
    except STORAGE_ERRORS as exc:
        raise RunError(ErrorKind.UNREACHABLE, f"storage failed: {exc}") from None


def outcome(graph: Graph, config: RunnableConfig, lane_calls: bool = False) -> Outcome:
    """Where the run stands: its state, with its record read back from the store; with
    `lane_calls`, its children's model attempts too (read only for a cassette: a child's record is
    read lane by lane)."""
    snapshot = graph.get_state(config)
    thread = str(config["configurable"]["thread_id"])
    values = with_reports(store_of(graph), materialized(store_of(graph), thread, snapshot.values))
    pending = [interaction for _, interaction in pending_of(snapshot)]
    children = _lane_calls(store_of(graph), thread, values) if lane_calls else []
    return Outcome(values, pending, thread, children)


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
        for call in model_calls(store, lane.scope, lane.cursor)
    ]


def lanes_of(db: str, thread_id: str) -> list[Lane]:
    """The child lanes of a run (`graph.runs.lanes`)."""
    with reading_graph(db) as graph:
        values = materialized(
            store_of(graph), thread_id, graph.get_state(config_of(thread_id)).values
        )
        return child_lanes(store_of(graph), thread_id, values)


def start(
    request: RunRequest,
    db: str,
    on_event: OnEvent,
    lane_calls: bool = False,
    context: WarrantContext | None = None,
    on_end: OnEnd | None = None,
) -> Outcome:
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
        return told_end(graph, outcome(graph, config, lane_calls), on_end)


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
) -> Outcome:
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
        return told_end(graph, outcome(graph, config, lane_calls), on_end)


def told_end(graph: Graph, result: Outcome, on_end: OnEnd | None) -> Outcome:
    """The run's outcome, told to `on_end` first if the run has ended."""
    if on_end is not None and result.ended:
        on_end(store_of(graph), result)
    return result


def has_run(snapshot: StateSnapshot) -> bool:
    """The thread holds a run's input (a worker killed while saving its first checkpoint leaves
    only the empty values of the list channels: no run, and the same request starts it)."""
    return has_run_values(snapshot.values)


def has_run_values(values: dict[str, Any]) -> bool:
    return "scenario" in values


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
        values = materialized(store_of(graph), thread, graph.get_state(config_of(thread)).values)
        reported = {thread: cursor_of(values)["events"]}
        reported |= {
            lane.scope: len(lane.events) for lane in child_lanes(store_of(graph), thread, values)
        }
        return cls(graph, thread, on_event, reported, {(): ""})

    def report(self, namespace: tuple[str, ...], cursor: dict[str, Any]) -> None:
        lane = self._lane(namespace)
        scope = child_scope(self.thread, lane)
        before = self.reported.get(scope, 0)
        for event in new_events(store_of(self.graph), scope, before, cursor):
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


def config_of(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def stored_run(db: str, thread_id: str) -> Outcome:
    """Where a stored run stands; no run on that thread is a `RunError` (`ErrorKind.NOT_FOUND`)."""
    with reading_graph(db) as graph:
        result = outcome(graph, config_of(thread_id))
    if not has_run_values(result.values):
        raise RunError(
            ErrorKind.NOT_FOUND, f"no run with thread id {thread_id!r} in {shown_db(db)}"
        )
    return result
