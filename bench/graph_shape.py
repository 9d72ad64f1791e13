"""What LangGraph alone costs for each loop's shape: the same turns with empty node bodies.

    .venv/bin/python bench/graph_shape.py [--reps 100] [--postgres postgresql://…/postgres]

The bare loop's shape is two tasks a turn (choose → act). Warrant's is admit, then three distinct
tasks a turn (choose → guard → execute through `Send`, as the design requires), then handover, with
append-only channels for the ledger and the evidence. Nine turns, interleaved, with no checkpointer,
`InMemorySaver`, SQLite and PostgreSQL (`durability="sync"`, one saver per mode shared by both, as
in `governed_step.py`). The ratio is the floor under `governed_step.py`'s Warrant / bare before any
governance work: what the design's extra superstep per turn costs in each persistence mode.
"""

from __future__ import annotations

import operator
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Send
from typing_extensions import TypedDict

from bench.modes import checkpoints, durability, modes_parser, savers, thread_config

TURNS = 9


class Shape(TypedDict, total=False):
    turn: int
    results: list[Any]
    events: Annotated[list[Any], operator.add]
    evidence: Annotated[list[Any], operator.add]


def bare_shape(saver: Any) -> CompiledStateGraph:
    builder = StateGraph(Shape)
    builder.add_node("choose", lambda state: {"turn": state.get("turn", 0) + 1})
    builder.add_node("act", lambda state: {"results": [*state.get("results", []), 1]})
    builder.add_edge(START, "choose")
    builder.add_conditional_edges(
        "choose", lambda state: "act" if state["turn"] < TURNS else END, ["act", END]
    )
    builder.add_edge("act", "choose")
    return builder.compile(checkpointer=saver)


def _guard(state: Shape) -> Command:
    goto = [Send("execute", {"turn": state["turn"]})] if state["turn"] < TURNS else "handover"
    return Command(update={"events": [1]}, goto=goto)


def warrant_shape(saver: Any) -> CompiledStateGraph:
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
    return builder.compile(checkpointer=saver)


def measure(saver: Any, reps: int) -> dict[str, tuple[float, int]]:
    """Median ms per run and checkpoints per run of each shape, interleaved."""
    graphs = {"bare": bare_shape(saver), "warrant": warrant_shape(saver)}
    times: dict[str, list[float]] = {name: [] for name in graphs}
    written: dict[str, int] = {}
    for rep in range(reps + 1):
        for name, graph in graphs.items():
            thread = f"{name}-{uuid.uuid4().hex}"
            started = time.perf_counter()
            graph.invoke({"turn": 0}, thread_config(thread), **durability(saver))
            if rep:  # the first round warms caches
                times[name].append(time.perf_counter() - started)
            written[name] = checkpoints(saver, thread)
    return {name: (statistics.median(times[name]) * 1000, written[name]) for name in graphs}


def main() -> None:
    parser = modes_parser(__doc__)
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, savers(Path(folder), args.postgres) as modes:
        rows = [(mode, measure(saver, args.reps)) for mode, saver, _ in modes]
    print(
        f"LangGraph alone, empty nodes, {TURNS} turns (medians of {args.reps} interleaved runs)\n"
    )
    print(
        "| persistence | bare loop ms/run (2 tasks a turn) | Warrant shape ms/run (admit, 3 tasks a turn, handover) | Warrant / bare | checkpoints per run (W / bare) |"
    )
    print("| --- | ---: | ---: | ---: | --- |")
    for mode, shapes in rows:
        (bare, bare_written), (warrant, warrant_written) = shapes["bare"], shapes["warrant"]
        print(
            f"| {mode} | {bare:.2f} | {warrant:.2f} | {warrant / bare:.2f}× | {warrant_written} / {bare_written} |"
        )


if __name__ == "__main__":
    main()
