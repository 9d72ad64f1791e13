"""How a node runs in the governed loop: on state the run wrote itself, with the record
committed around it and its update sealed (`stage`); a `Send` task only on a payload its sender
sealed (`task`); a branching node's next step named from the state its update leaves (`routed`).
The crash seam (`graph.crashpoints`) is called around every node: a test's pause points, nothing
otherwise. `graph/build.py` wires these into the graph."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.config import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import Command

from graph import crashpoints
from graph.state import apply_update
from nodes.context import WarrantContext, now
from nodes.integrity import (
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
from nodes.record import as_arrivals, commit_arrivals, committed
from nodes.staged import StagedWrites

State = dict[str, Any]
Stage = Callable[[State, RunnableConfig, Runtime[WarrantContext]], State]
Route = Callable[[State], Any]


def stage(name: str, node: Callable[..., State]) -> Stage:
    """A node function given the `config`/`runtime` it declares, run only on state the run wrote
    itself, on the record with the last step's arrivals committed; its events, receipts and model
    calls committed to the store, its update sealed for this run (`nodes.record`,
    `nodes.integrity`). The crash seam (`graph.crashpoints`) is called around it: a test's pause
    points, nothing otherwise."""
    wants = inspect.signature(node).parameters.keys() & {"config", "runtime"}
    inputs = INPUTS if name == "admit" else frozenset()

    def call(state: State, config: RunnableConfig, runtime: Runtime[WarrantContext]) -> State:
        scope = scope_of(config)
        found = unsealed_fields(state, scope, inputs) or out_of_step(state, runtime.store, scope)
        staged = StagedWrites(runtime.store)  # the step's writes, in one batch at its end
        runtime = runtime.override(store=staged)
        given = {"config": config, "runtime": runtime}
        # Nothing is committed on a cursor or after arrivals the run did not leave: they stay in
        # the state for the handover to find.
        untrusted = {"cursor", "arrivals"} & set(found)
        state, arrived = commit_arrivals(state, staged, scope, skip=bool(untrusted))
        # The handover node checks its state itself: it reports what it finds instead of ending.
        if name != "handover" and (found or state.get("tampered")):
            update = _ending(name, found, state, scope, runtime)
        else:
            crashpoints.pause("before", name, state)
            update = node(state, **{key: given[key] for key in wants})
            crashpoints.pause("after", name, state)
        recorded = committed(update, state, staged, scope, write="cursor" not in found)
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


def task(name: str, node: Callable[..., State]) -> Callable[..., State]:
    """A node run as a `Send` task: only on a payload its sender sealed for this run; its update
    sealed."""

    def call(
        payload: State, config: RunnableConfig, runtime: Runtime[WarrantContext], *extra: Any
    ) -> State:
        scope, given = scope_of(config), without_seal(payload)
        if not payload_is_sealed(name, payload, scope):
            return _unsealed_task(name, scope, runtime)
        crashpoints.pause("before", name, given)
        return _task_update(name, given, node(given, runtime, *extra), scope)

    return call


def atask(name: str, node: Callable[..., Awaitable[State]]) -> Callable[..., Awaitable[State]]:
    """`task` for a node that awaits (a child's graph, on the LangGraph server)."""

    async def call(
        payload: State, config: RunnableConfig, runtime: Runtime[WarrantContext], *extra: Any
    ) -> State:
        scope, given = scope_of(config), without_seal(payload)
        if not payload_is_sealed(name, payload, scope):
            return _unsealed_task(name, scope, runtime)
        crashpoints.pause("before", name, given)
        return _task_update(name, given, await node(given, runtime, *extra), scope)

    return call


def _task_update(name: str, given: State, update: State, scope: str) -> State:
    crashpoints.pause("after", name, given)
    return seal_update(as_arrivals(update), scope)


def _unsealed_task(name: str, scope: str, runtime: Runtime[WarrantContext]) -> State:
    return seal_update(as_arrivals(tampering(name, ["task"], 0, now(runtime))), scope)


def scope_of(config: RunnableConfig) -> str:
    return scope_in(config["configurable"])


def routed(main: Stage, route: Route) -> Callable[..., Command]:
    """The node's update and its next step, read from the state that update leaves."""

    def node(state: State, config: RunnableConfig, runtime: Runtime[WarrantContext]) -> Command:
        update = main(state, config, runtime)
        if update.get("status") == TAMPERED:
            return Command(update=update, goto="handover")
        return Command(update=update, goto=route(apply_update(state, update)))

    return node
