"""What LangGraph alone costs for each loop's shape: the same turns with empty node bodies.

    .venv/bin/python bench/graph_shape.py [--reps 200]

The bare loop's shape is two tasks a turn (choose → act). Warrant's is admit, then three distinct
tasks a turn (choose → guard → execute through `Send`, as the design requires), then handover, with
append-only channels for the ledger and the evidence. Nine turns, no checkpointer, interleaved;
the ratio is the floor under `governed_step.py`'s Warrant / bare before any governance work.
"""

from __future__ import annotations

import argparse
import operator
import statistics
import time
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Send
from typing_extensions import TypedDict

TURNS = 9


class Shape(TypedDict, total=False):
    turn: int
    results: list[Any]
    events: Annotated[list[Any], operator.add]
    evidence: Annotated[list[Any], operator.add]


def bare_shape() -> CompiledStateGraph:
    builder = StateGraph(Shape)
    builder.add_node("choose", lambda state: {"turn": state.get("turn", 0) + 1})
    builder.add_node("act", lambda state: {"results": [*state.get("results", []), 1]})
    builder.add_edge(START, "choose")
    builder.add_conditional_edges(
        "choose", lambda state: "act" if state["turn"] < TURNS else END, ["act", END]
    )
    builder.add_edge("act", "choose")
    return builder.compile()


def _guard(state: Shape) -> Command:
    goto = [Send("execute", {"turn": state["turn"]})] if state["turn"] < TURNS else "handover"
    return Command(update={"events": [1]}, goto=goto)


def warrant_shape() -> CompiledStateGraph:
    builder = StateGraph(Shape)
    builder.add_node("admit", lambda state: {"events": [1]})
    builder.add_node(
        "choose",
        lambda state: Command(
            update={"turn": state.get("turn", 0) + 1, "events": [1]}, goto="guard"
        ),
        destinations=("guard",),
    )
    builder.add_node("guard", _guard, destinations=("execute", "handover"))
    builder.add_node("execute", lambda state: {"evidence": [1], "events": [1]})
    builder.add_node("handover", lambda state: {"events": [1]})
    builder.add_edge(START, "admit")
    builder.add_edge("admit", "choose")
    builder.add_edge("execute", "choose")
    builder.add_edge("handover", END)
    return builder.compile()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    graphs = {"bare": bare_shape(), "warrant": warrant_shape()}
    times: dict[str, list[float]] = {name: [] for name in graphs}
    for _ in range(args.reps):  # interleaved
        for name, graph in graphs.items():
            started = time.perf_counter()
            graph.invoke({"turn": 0})
            times[name].append(time.perf_counter() - started)
    bare, warrant = (statistics.median(times[name]) * 1000 for name in ("bare", "warrant"))
    print(
        f"LangGraph alone, empty nodes, {TURNS} turns (medians of {args.reps} interleaved runs)\n"
    )
    print("| shape | ms per run | vs bare |")
    print("| --- | ---: | ---: |")
    print(f"| bare loop (2 tasks a turn) | {bare:.2f} | 1.00× |")
    print(f"| Warrant (admit, 3 tasks a turn, handover) | {warrant:.2f} | {warrant / bare:.2f}× |")


if __name__ == "__main__":
    main()
