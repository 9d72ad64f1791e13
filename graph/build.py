"""The wiring: nodes and edges of the governed loop (DESIGN §2). No logic lives here.

START → admit → choose ─┬─ a model chooser: request recorded → model ─(reply recorded)→ guard
                       └─ any other chooser: proposal recorded ───────────────────→ guard
guard ─┬─ approved calls → execute (one task per call) → choose
       ├─ refused, or a question answered → choose
       ├─ needs a person → human (one interrupt per interaction) → guard
       └─ stop / budget / deadline / refusal limit / model failed → handover → END
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.crashpoints import pausable
from graph.state import RunInput, WarrantState
from nodes.admit import admit
from nodes.choose import choose
from nodes.execute import execute
from nodes.guard import guard, route_after_guard
from nodes.handover import handover
from nodes.human import human
from nodes.model import model, route_after_choose, route_after_model


def build() -> StateGraph:
    # No context_schema: the context (a clock, embedded choosers) is for in-process callers only
    # and has no JSON form for the server; nodes fall back to defaults when it is absent.
    builder = StateGraph(WarrantState, input_schema=RunInput)
    for name, node in (
        ("admit", admit),
        ("choose", choose),
        ("guard", guard),
        ("execute", execute),
        ("model", model),
        ("human", human),
        ("handover", handover),
    ):
        builder.add_node(name, pausable(name, node))
    builder.add_edge(START, "admit")
    builder.add_edge("admit", "choose")
    builder.add_conditional_edges("choose", route_after_choose, ["model", "guard", "handover"])
    builder.add_conditional_edges("model", route_after_model, ["model", "guard", "handover"])
    builder.add_conditional_edges(
        "guard", route_after_guard, ["execute", "human", "choose", "handover"]
    )
    builder.add_edge("execute", "choose")
    builder.add_edge("human", "guard")
    builder.add_edge("handover", END)
    return builder


def compile_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """The governed loop; the LangGraph server compiles it without a checkpointer."""
    return build().compile(checkpointer=checkpointer, name="triage")
