"""The wiring: nodes and edges of the governed loop (DESIGN §2). No governance logic lives here.

START → admit → choose ─┬─ a model chooser: request recorded → model ─(reply recorded)→ guard
                       └─ any other chooser: proposal recorded ───────────────────→ guard
guard ─┬─ approved calls → execute (one task per call) → choose
       ├─ refused, a question answered, notes recalled from memory → choose
       ├─ needs a person → human (one interrupt per interaction) → guard
       └─ stop / budget / deadline / refusal limit / model failed → handover → END
admit, given a new input on a thread that has a run: the input refused and recorded → the run's
own waiting interactions again (human), its end, or its next choice

Top to bottom: the routers, then the nodes and edges. The nodes that branch (admit, choose,
model, guard) name their next step through their router, in a `Command` read from the state their
update leaves: a conditional edge would copy every channel to read that state again, on every
turn. How each node runs governed (seals, the record, the crash seam) is `graph/governed.py`.
"""

from __future__ import annotations

import functools
from typing import Any, Literal, TypeAlias

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import get_runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from contract.codes import Outcome, Status
from contract.state import ChildInput, RunInput, WarrantState
from graph.children import CHILD, arun_child, child_tasks, run_child
from graph.governed import Graph, atask, bound_store, node_values, routed, stage, task
from ledger.context import WarrantContext
from ledger.integrity import run_scope
from ledger.record import RunRecord
from ledger.store import cursor_of
from nodes.admit import admit, admit_child
from nodes.choose import choose
from nodes.dispatch import execute_tasks
from nodes.execute import execute
from nodes.guard import WAITING
from nodes.handover import handover
from nodes.human import human, to_people
from nodes.intake import guard_step
from nodes.model import model

Builder: TypeAlias = StateGraph[WarrantState, WarrantContext, RunInput | ChildInput, WarrantState]
Payload = dict[str, Any]
"""A `Send` task's payload, as the node layer reads it (`graph.governed`)."""


# The routers: where each branching node goes, read from the state its update leaves.

Chosen = Literal["model", "guard", "handover"]


def after_choose(state: WarrantState) -> Chosen:
    """A model chooser's request recorded → the model; a proposal → the guard; a request that
    does not fit the route → the handover."""
    if state.get("status") == Status.CAPABILITY_GAP:
        return "handover"
    return "model" if state.get("proposal") is None else "guard"


def after_model(state: WarrantState) -> Chosen:
    """A reply → the guard; an attempt to make again → the model; the model failed → handover."""
    if state.get("status") == Status.MODEL_FAILED:
        return "handover"
    return "model" if state.get("proposal") is None else "guard"


def after_guard(state: WarrantState) -> list[Send] | Literal["choose", "handover"]:
    """Approved calls → one `execute` task each; a delegation → one `child` task per task; a
    person needed → one `human` task per pending interaction; refused or answered → choose
    again; stop or end → handover."""
    decision = state["decision"]
    outcome = decision["outcome"]
    if outcome == Outcome.EXECUTE:
        return execute_tasks(state, decision["calls"])
    if outcome == Outcome.DELEGATE:
        return child_tasks(state, decision["tasks"])
    if outcome in WAITING:
        return to_people(node_values(state))
    if outcome in (Outcome.REFUSED, Outcome.ANSWERED, Outcome.ASKED, Outcome.RECALL):
        return "choose"
    return "handover"


def after_admit(state: WarrantState) -> list[Send] | str:
    """A new run goes to its first choice; a refused input leaves the run where it was: waiting
    for its people again, ended, or going on from the step it was about to take."""
    if state.get("handover"):
        return END
    return where_it_stood(state)


def where_it_stood(state: WarrantState, scope: str | None = None) -> list[Send] | str:
    """The step a run was about to take, read from what it wrote: for a run whose own steps were
    cut short (a new input on its thread, the server's `interrupt` multitask strategy). Approved
    calls without a receipt run (none is lost, none runs twice); a proposal not yet decided is
    decided; people still asked are asked again."""
    turn = state.get("turn", 0)
    decision = state.get("decision") or {}
    if turn == 0:
        return "choose"
    if decision.get("turn") != turn:
        return after_choose(state)
    if decision["outcome"] == Outcome.EXECUTE:
        done = {
            item["evidence"]["call_id"]
            for item in state.get("arrivals") or ()
            if "evidence" in item
        }
        done |= set(
            RunRecord(get_store(), scope or run_scope()).receipts_of_calls(
                cursor_of(state), [call["id"] for call in decision["calls"]]
            )
        )
        missing = [call for call in decision["calls"] if call["id"] not in done]
        return execute_tasks(state, missing, scope) if missing else "choose"
    if decision["outcome"] == Outcome.DELEGATE:
        handed = {
            document["task"]
            for document in RunRecord(get_store(), scope or run_scope()).handoffs(cursor_of(state))
        }
        handed |= {
            item["handoff"]["task"] for item in state.get("arrivals") or () if "handoff" in item
        }
        waiting = [task for task in decision["tasks"] if task["id"] not in handed]
        return child_tasks(state, waiting, scope) if waiting else "choose"
    if decision["outcome"] in WAITING:
        return to_people(node_values(state), scope) or "guard"
    return after_guard(state)


def build(served: bool = False, child: bool = False) -> Builder:
    """`served`: for the LangGraph server, whose run inputs come from its API's callers.
    `child`: the loop a child investigation runs, admitted from its delegated task."""
    # No context_schema: the context (a clock, embedded choosers) is for in-process callers only
    # and has no JSON form for the server; nodes fall back to defaults when it is absent.
    builder: Builder = StateGraph(WarrantState, input_schema=ChildInput if child else RunInput)
    chosen = ("model", "guard", "handover")
    admitting = (
        admit_child if child else functools.wraps(admit)(functools.partial(admit, served=served))
    )
    builder.add_node(
        "admit",
        routed(stage("admit", admitting), after_admit),
        destinations=("choose", "model", "guard", "execute", CHILD, "human", "handover", END),
    )
    builder.add_node("choose", routed(stage("choose", choose), after_choose), destinations=chosen)
    builder.add_node(
        "guard",
        routed(stage("guard", guard_step), after_guard),
        destinations=("execute", CHILD, "human", "choose", "handover"),
    )
    # LangGraph's typing wants a node's input to be a state schema, not a `Send` task's payload.
    builder.add_node(CHILD, _child_node(child))  # type: ignore[type-var]
    builder.add_node("execute", task("execute", execute))
    builder.add_node("model", routed(stage("model", model), after_model), destinations=chosen)
    builder.add_node("human", task("human", human))
    # LangGraph runs a node taking (state, config, runtime), injecting both by name; its typing
    # names no such signature.
    builder.add_node("handover", stage("handover", handover))  # type: ignore[arg-type]
    builder.add_edge(START, "admit")
    builder.add_edge("execute", "choose")
    builder.add_edge(CHILD, "choose")
    builder.add_edge("human", "guard")
    builder.add_edge("handover", END)
    return builder


def _child_node(child: bool) -> RunnableLambda[Payload, Payload]:
    """The `child` node, run synchronously (embedded) or awaited (the LangGraph server, whose
    checkpointer is asynchronous only). Main's holds the child graph itself, so that Studio and
    diagrams show it as main's subgraph; a child's own children (a deeper delegation) run the
    same graph, found when they start."""
    running, arunning = task(CHILD, run_child), atask(CHILD, arun_child)
    if child:

        def deeper(payload: Payload, config: RunnableConfig) -> Payload:
            return running(payload, config, get_runtime(), child_graph())

        async def adeeper(payload: Payload, config: RunnableConfig) -> Payload:
            return await arunning(payload, config, get_runtime(), child_graph())

        return RunnableLambda(deeper, adeeper, name=CHILD)
    subgraph = child_graph()

    def child_node(payload: Payload, config: RunnableConfig) -> Payload:
        return running(payload, config, get_runtime(), subgraph)

    async def achild_node(payload: Payload, config: RunnableConfig) -> Payload:
        return await arunning(payload, config, get_runtime(), subgraph)

    return RunnableLambda(child_node, achild_node, name=CHILD)


@functools.cache
def child_graph() -> Graph:
    """The governed loop as a child runs it, compiled once; the run's checkpointer and store are
    its own (LangGraph passes them to a graph invoked inside a node)."""
    return build(child=True).compile(name=CHILD)


def compile_graph(
    checkpointer: BaseCheckpointSaver[str] | None = None,
    store: BaseStore | None = None,
    *,
    served: bool = False,
) -> Graph:
    """The governed loop; the LangGraph server compiles it without a checkpointer or a store and
    binds its own. Compiling takes milliseconds, so it happens once per process (and pause point);
    each caller gets a copy bound to its checkpointer and store (a new in-memory store if none)."""
    if served:
        return _compiled(served)
    bound = {"checkpointer": checkpointer, "store": store if store is not None else InMemoryStore()}
    return _compiled(served).copy(update=bound)


@functools.cache
def _compiled(served: bool) -> Graph:
    return build(served).compile(name="triage")


def store_of(graph: Graph) -> BaseStore:
    """The store `compile_graph` bound the graph to."""
    return bound_store(graph.store)


def saver_of(graph: Graph) -> BaseCheckpointSaver[str]:
    """The checkpointer `compile_graph` bound the graph to (a reader's or a run's)."""
    if not isinstance(graph.checkpointer, BaseCheckpointSaver):
        raise RuntimeError("the graph has no checkpointer of its own: compile it with one")
    return graph.checkpointer
