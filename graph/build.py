"""The wiring: nodes and edges of the governed loop (DESIGN §2). No governance logic lives here.

START → admit → choose ─┬─ a model chooser: request recorded → model ─(reply recorded)→ guard
                       └─ any other chooser: proposal recorded ───────────────────→ guard
guard ─┬─ approved calls → execute (one task per call) → choose
       ├─ refused, or a question answered → choose
       ├─ needs a person → human (one interrupt per interaction) → guard
       └─ stop / budget / deadline / refusal limit / model failed → handover → END
admit, given a new input on a thread that has a run: the input refused and recorded → the run's
own waiting interactions again (human), its end, or its next choice

The nodes that branch (choose, model, guard) name their next step themselves, in a `Command`
read from the state their update leaves: a conditional edge would copy every channel to read
that state again, on every turn.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from graph.crashpoints import POINT, pausable, stored
from graph.state import RunInput, WarrantState, apply_update
from nodes.admit import admit, route_after_admit
from nodes.choose import choose
from nodes.context import WarrantContext, now
from nodes.execute import execute
from nodes.guard import guard, route_after_guard
from nodes.handover import handover
from nodes.human import human
from nodes.integrity import (
    INPUTS,
    TAMPERED,
    out_of_step,
    payload_is_sealed,
    seal_update,
    tampering,
    trusted_turn,
    unsealed_fields,
    without_seal,
)
from nodes.model import model, route_after_choose, route_after_model
from nodes.record import as_arrivals, commit_arrivals, committed
from nodes.staged import StagedWrites

State = dict[str, Any]
Stage = Callable[[State, RunnableConfig, Runtime[WarrantContext]], State]
Route = Callable[[State], Any]


def stage(name: str, node: Callable[..., State]) -> Stage:
    """A node function behind its pause point, given the `config`/`runtime` it declares, run only
    on state the run wrote itself, on the record with the last step's arrivals committed; its
    events, receipts and model calls committed to the store, its update sealed for this run
    (`nodes.record`, `nodes.integrity`)."""
    paused = pausable(name, node)
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
            update = paused(state, **{key: given[key] for key in wants})
        recorded = committed(update, state, staged, scope, write="cursor" not in found)
        staged.flush()
        sealed = seal_update(arrived | recorded, scope)
        stored(name, state)
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
    paused = pausable(name, node)

    def call(payload: State, config: RunnableConfig, runtime: Runtime[WarrantContext]) -> State:
        scope = scope_of(config)
        if not payload_is_sealed(name, payload, scope):
            return seal_update(as_arrivals(tampering(name, ["task"], 0, now(runtime))), scope)
        return seal_update(as_arrivals(paused(without_seal(payload), runtime)), scope)

    return call


def scope_of(config: RunnableConfig) -> str:
    return str(config["configurable"].get("thread_id", ""))


def routed(main: Stage, route: Route) -> Callable[..., Command]:
    """The node's update and its next step, read from the state that update leaves."""

    def node(state: State, config: RunnableConfig, runtime: Runtime[WarrantContext]) -> Command:
        update = main(state, config, runtime)
        if update.get("status") == TAMPERED:
            return Command(update=update, goto="handover")
        return Command(update=update, goto=route(apply_update(state, update)))

    return node


def build(served: bool = False) -> StateGraph:
    """`served`: for the LangGraph server, whose run inputs come from its API's callers."""
    # No context_schema: the context (a clock, embedded choosers) is for in-process callers only
    # and has no JSON form for the server; nodes fall back to defaults when it is absent.
    builder = StateGraph(WarrantState, input_schema=RunInput)
    chosen = ("model", "guard", "handover")
    admitting = functools.wraps(admit)(functools.partial(admit, served=served))
    builder.add_node("admit", routed(stage("admit", admitting), route_after_admit), destinations=("choose", "model", "guard", "execute", "human", "handover", END))  # fmt: skip
    builder.add_node("choose", routed(stage("choose", choose), route_after_choose), destinations=chosen)  # fmt: skip
    builder.add_node(
        "guard",
        routed(stage("guard", guard), route_after_guard),
        destinations=("execute", "human", "choose", "handover"),
    )
    builder.add_node("execute", task("execute", execute))
    builder.add_node("model", routed(stage("model", model), route_after_model), destinations=chosen)  # fmt: skip
    builder.add_node("human", task("human", human))
    builder.add_node("handover", stage("handover", handover))
    builder.add_edge(START, "admit")
    builder.add_edge("execute", "choose")
    builder.add_edge("human", "guard")
    builder.add_edge("handover", END)
    return builder


def compile_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    store: BaseStore | None = None,
    *,
    served: bool = False,
) -> CompiledStateGraph:
    """The governed loop; the LangGraph server compiles it without a checkpointer or a store and
    binds its own. Compiling takes milliseconds, so it happens once per process (and pause point);
    each caller gets a copy bound to its checkpointer and store (a new in-memory store if none)."""
    if served:
        return _compiled(os.environ.get(POINT), served)
    bound = {"checkpointer": checkpointer, "store": store if store is not None else InMemoryStore()}
    return _compiled(os.environ.get(POINT), served).copy(update=bound)


@functools.cache
def _compiled(pause_point: str | None, served: bool) -> CompiledStateGraph:
    """One compiled graph per pause point: pause points are read when the nodes are wrapped."""
    return build(served).compile(name="triage")
