"""How a node runs in the governed loop: on state the run wrote itself, with the record
committed around it and its update sealed (`stage`); a `Send` task only on a payload its sender
sealed (`task`); a branching node's next step named from the state its update leaves (`routed`).
The crash seam (`graph.crashpoints`) is called around every node: a test's pause points, nothing
otherwise. `graph/build.py` wires these into the graph."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Command

from contract.state import ChildInput, RunInput, WarrantState, apply_update
from graph import crashpoints
from ledger.commit import as_arrivals
from ledger.context import WarrantContext, context_of, now
from ledger.integrity import (
    INPUTS,
    TAMPERED,
    out_of_step,
    payload_is_sealed,
    scope_in,
    seal_update,
    tampering,
    trusted_turn,
    unsealed_fields,
    without_seal,
)
from ledger.record import RunRecord
from ledger.staged import StagedWrites
from nodes.handoff import received
from nodes.watched import step_view

State = dict[str, Any]
"""A state or an update as the node layer (`nodes/`) takes and returns it."""
Graph: TypeAlias = CompiledStateGraph[
    WarrantState, WarrantContext, RunInput | ChildInput, WarrantState
]
"""The governed loop compiled (`graph.build`), main's or a child's. Its context is a
`WarrantContext` in process (the CLI, tests, embedded use); the LangGraph server gives none
(`ledger.context.context_of` falls back to the real clock)."""
Stage = Callable[[State, RunnableConfig, Runtime[WarrantContext]], State]
Node = Callable[..., Mapping[str, Any]]
"""A node function (`nodes/`): its update, a `contract.state.StepUpdate` or a plain dict."""
Route = Callable[[WarrantState], Any]
"""A router (`graph.build`): the next step, read from the state a node's update leaves."""


def as_state(values: Mapping[str, Any]) -> WarrantState:
    """Values the graph holds, read as its state. The seam between the two typings of one dict:
    LangGraph keeps `WarrantState`'s channels only, and the node layer (`nodes/`, `graph.governed`)
    takes and returns a state as `dict[str, Any]`; no copy is made."""
    return cast(WarrantState, values)


def node_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The state, or one of its typed values (a decision's call), as the node layer's functions
    take it (`as_state`'s other side); no copy."""
    return cast(dict[str, Any], values)


def stage(name: str, node: Node) -> Stage:
    """A node function given the `config`/`runtime` it declares, run only on state the run wrote
    itself, on the record with the last step's arrivals committed; its events, receipts and model
    calls committed to the store, its update sealed for this run (`ledger.store`,
    `ledger.integrity`). The crash seam (`graph.crashpoints`) is called around it: a test's pause
    points, nothing otherwise."""
    wants = inspect.signature(node).parameters.keys() & {"config", "runtime"}
    inputs = INPUTS if name == "admit" else frozenset()

    def call(state: State, config: RunnableConfig, runtime: Runtime[WarrantContext]) -> State:
        scope = scope_of(config)
        arrivals = list(state.get("arrivals") or ())
        found = unsealed_fields(state, scope, inputs) or out_of_step(state, runtime.store, scope)
        staged = StagedWrites(
            bound_store(runtime.store), context_of(runtime).clock, scope
        )  # the step's writes, in one batch
        runtime = runtime.override(store=staged)
        given = {"config": config, "runtime": runtime}
        # Nothing is committed on a cursor or after arrivals the run did not leave: they stay in
        # the state for the handover to find.
        untrusted = {"cursor", "arrivals"} & set(found)
        record = RunRecord(staged, scope)
        state, arrived = record.commit_arrivals(state, received, skip=bool(untrusted))
        # The handover node checks its state itself: it reports what it finds instead of ending.
        if name != "handover" and (found or state.get("tampered")):
            update = _ending(name, found, state, scope, runtime)
        else:
            crashpoints.pause("before", name, state)
            update = dict(node(state, **{key: given[key] for key in wants}))
            crashpoints.pause("after", name, state)
        update = {**update, "view": step_view(name, update, arrivals)}
        recorded = record.committed(update, state, write="cursor" not in found)
        staged.flush()
        sealed = seal_update(arrived | recorded, scope)
        crashpoints.pause("stored", name, state)
        return sealed

    return call


def _ending(
    name: str, found: list[Any], state: State, scope: str, runtime: Runtime[WarrantContext]
) -> State:
    """Found values the run did not write: recorded once (a task may have recorded it already),
    then the run goes to its handover."""
    fields = [field for field in found if isinstance(field, str)]
    turn = trusted_turn(state, scope)
    recorded = tampering(name, fields, turn, now(runtime)) if fields else {}
    return {**recorded, "status": TAMPERED}


def task(name: str, node: Node) -> Callable[..., State]:
    """A node run as a `Send` task: only on a payload its sender sealed for this run; its update
    sealed."""

    def call(
        payload: State, config: RunnableConfig, runtime: Runtime[WarrantContext], *extra: Any
    ) -> State:
        scope, given, refused = _opened(name, payload, config, runtime)
        if refused is not None:
            return refused
        return _task_update(name, given, dict(node(given, runtime, *extra)), scope)

    return call


def atask(name: str, node: Callable[..., Awaitable[State]]) -> Callable[..., Awaitable[State]]:
    """`task` for a node that awaits (a child's graph, on the LangGraph server)."""

    async def call(
        payload: State, config: RunnableConfig, runtime: Runtime[WarrantContext], *extra: Any
    ) -> State:
        scope, given, refused = _opened(name, payload, config, runtime)
        if refused is not None:
            return refused
        return _task_update(name, given, await node(given, runtime, *extra), scope)

    return call


def _opened(
    name: str, payload: State, config: RunnableConfig, runtime: Runtime[WarrantContext]
) -> tuple[str, State, State | None]:
    """A task's payload opened: the run's scope, the values without their seal, and the update
    that records tampering instead when the sender did not seal them for this run (else None)."""
    scope, given = scope_of(config), without_seal(payload)
    if not payload_is_sealed(name, payload, scope):
        return scope, given, _unsealed_task(name, scope, runtime)
    crashpoints.pause("before", name, given)
    return scope, given, None


def _task_update(name: str, given: State, update: State, scope: str) -> State:
    crashpoints.pause("after", name, given)
    return seal_update(as_arrivals(update), scope)


def _unsealed_task(name: str, scope: str, runtime: Runtime[WarrantContext]) -> State:
    return seal_update(as_arrivals(tampering(name, ["task"], 0, now(runtime))), scope)


def bound_store(store: BaseStore | None) -> BaseStore:
    """The store a node's runtime or a compiled graph holds: `graph.build.compile_graph` binds
    one (an in-memory one if none is given), the LangGraph server its own; none is a wiring
    mistake, not a run's failure."""
    if store is None:
        raise RuntimeError("the graph runs without a store: compile it with graph.build")
    return store


def scope_of(config: RunnableConfig) -> str:
    return scope_in(config["configurable"])


def routed(main: Stage, route: Route) -> Callable[..., Command[str]]:
    """The node's update and its next step, read from the state that update leaves."""

    def node(
        state: State, config: RunnableConfig, runtime: Runtime[WarrantContext]
    ) -> Command[str]:
        update = main(state, config, runtime)
        if update.get("status") == TAMPERED:
            return Command(update=update, goto="handover")
        return Command(update=update, goto=route(as_state(apply_update(state, update))))

    return node
