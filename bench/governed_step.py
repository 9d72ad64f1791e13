"""Per-step cost of a governed run against its peers, measured in the same run, interleaved.

    .venv/bin/python bench/governed_step.py [--reps 15] [--postgres postgresql://…/postgres] [--json FILE]

A scripted R42-style investigation (8 tool calls and a stop) runs three ways over the same tool
functions: Warrant (admission and the first choice → guard → execute → choose → … → the guard's
stop with the handover), a bare two-node LangGraph loop, and langchain's `create_agent` with
`ToolCallLimitMiddleware` and `HumanInTheLoopMiddleware` driven by a scripted chat model — with no
checkpointer, `InMemorySaver`, SQLite and PostgreSQL (`durability="sync"`; the three systems share
one saver per mode). A step is a chooser turn (9 per run). Each system is compiled once and then
only invoked, one run per thread. Prints medians per step, ratios and checkpoints written per step.

The floor beside them, measured in the same run: Warrant's graph shape with empty nodes
(`bench/graph_shape.py`: admit, then choose → guard → execute a turn, then handover) plus the
tools' own time (the same calls with no graph): what any loop of the design's shape costs before
any governance work, against the same peers.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from bench.graph_shape import warrant_shape
from bench.modes import checkpoints, durability, modes_parser, savers, thread_config
from graph.build import compile_graph
from lab import LAB_DIR
from ledger.context import WarrantContext
from nodes.choosers import ScriptedChooser
from scenario.registry import Scenario, load_scenario
from tools.catalog import tools_of

LOG, SPEC, HISTORY = (
    "lab/runs/R42/reset_smoke.log",
    "lab/spec/reset_controller.md",
    "lab/history/regressions.csv",
)
CALLS = [
    ("searchlogs", {"path": LOG, "query": "reset_smoke", "limit": 20}),
    ("searchlogs", {"path": LOG, "query": "RST_CHK", "limit": 20}),
    ("searchlogs", {"path": LOG, "query": "UVM_ERROR", "limit": 20}),
    ("searchlogs", {"path": LOG, "query": "clk_en", "limit": 20}),
    ("readspec", {"path": SPEC, "section": "reset_release"}),
    ("readspec", {"path": SPEC, "section": "clock_enable"}),
    ("getrunhistory", {"path": HISTORY, "test": "reset_smoke", "limit": 10}),
    ("getrunhistory", {"path": HISTORY, "test": "fifo_basic", "limit": 10}),
]
TURNS = len(CALLS) + 1


def bench_lab(folder: Path) -> Path:
    copy = folder / "lab"
    shutil.copytree(LAB_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    manifest = copy / "R42.toml"
    manifest.write_text(
        manifest.read_text()
        .replace("steps = 8", "steps = 12")
        .replace("evidence = 6", "evidence = 12")
    )
    return manifest


def run_tool(scenario: Scenario, name: str, args: dict[str, Any]) -> str:
    """The same tool functions every system calls: strict arguments, registry lookup, bounded excerpt."""
    spec = tools_of("triage")[name]
    validated = spec.args_model.model_validate(args)
    excerpt = spec.run(validated, {"path": scenario.lookup(validated.path, spec.record_kind, name)})
    return excerpt.model_dump_json()


# --- Warrant -------------------------------------------------------------------------------------


def warrant_runner(manifest: Path, saver: Any, store: BaseStore) -> Callable[[str], None]:
    script = [
        {"summary": name, "tool_calls": [{"id": f"c{n}", "name": name, "args": args}]}
        for n, (name, args) in enumerate(CALLS, 1)
    ]
    script.append({"summary": "stop", "message": {"kind": "stop", "text": "done"}})
    graph = compile_graph(saver, store)
    context = WarrantContext(choosers={"bench": ScriptedChooser(script)})

    def run(thread: str) -> None:
        state = graph.invoke(
            {"scenario": str(manifest), "chooser": "bench"},
            thread_config(thread),
            context=context,
            **durability(saver),
        )
        evidence = state["handover"]["evidence"]
        assert len(evidence) == len(CALLS) and state["status"] == "stopped", state.get("status")

    return run


# --- a bare two-node loop ---------------------------------------------------------------------


class BareState(TypedDict, total=False):
    turn: int
    results: list[str]
    pending: dict[str, Any] | None


def bare_runner(scenario: Scenario, saver: Any) -> Callable[[str], None]:
    def choose(state: BareState) -> BareState:
        turn = state.get("turn", 0)
        pending = {"name": CALLS[turn][0], "args": CALLS[turn][1]} if turn < len(CALLS) else None
        return {"turn": turn + 1, "pending": pending}

    def act(state: BareState) -> BareState:
        pending = state["pending"]
        return {
            "results": [
                *state.get("results", []),
                run_tool(scenario, pending["name"], pending["args"]),
            ]
        }

    builder = StateGraph(BareState)
    builder.add_node("choose", choose)
    builder.add_node("act", act)
    builder.add_edge(START, "choose")
    builder.add_conditional_edges(
        "choose", lambda state: "act" if state["pending"] else END, ["act", END]
    )
    builder.add_edge("act", "choose")
    graph = builder.compile(checkpointer=saver)

    def run(thread: str) -> None:
        state = graph.invoke({"turn": 0, "results": []}, thread_config(thread), **durability(saver))
        assert len(state["results"]) == len(CALLS)

    return run


# --- langchain create_agent with middleware ---------------------------------------------------


class ScriptedChatModel(GenericFakeChatModel):
    """Replies with the script's message for the turn, read from the conversation (the number of
    AI messages so far), so that one agent, compiled once like the other systems, serves every run."""

    script: list[AIMessage]

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        turn = sum(isinstance(message, AIMessage) for message in messages)
        return ChatResult(generations=[ChatGeneration(message=self.script[turn].model_copy())])


def agent_runner(scenario: Scenario, saver: Any) -> Callable[[str], None]:
    # langchain is imported here, not at the top: graph_shape.py and throughput.py import this
    # module and need no langchain. `main` checks that it is installed before anything runs.
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallLimitMiddleware

    @tool
    def searchlogs(path: str, query: str, limit: int = 20) -> str:
        """First lines of an approved log containing a fixed string."""
        return run_tool(scenario, "searchlogs", {"path": path, "query": query, "limit": limit})

    @tool
    def readspec(path: str, section: str) -> str:
        """One section of an approved specification."""
        return run_tool(scenario, "readspec", {"path": path, "section": section})

    @tool
    def getrunhistory(path: str, test: str, limit: int = 10) -> str:
        """Recent rows for one test in an approved run history."""
        return run_tool(scenario, "getrunhistory", {"path": path, "test": test, "limit": limit})

    middleware = [
        ToolCallLimitMiddleware(run_limit=20),
        HumanInTheLoopMiddleware(
            interrupt_on={"searchlogs": False, "readspec": False, "getrunhistory": False}
        ),
    ]
    replies = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{n}"}])
        for n, (name, args) in enumerate(CALLS, 1)
    ]
    model = ScriptedChatModel(messages=iter(()), script=[*replies, AIMessage("done")])
    agent = create_agent(
        model, [searchlogs, readspec, getrunhistory], middleware=middleware, checkpointer=saver
    )

    def run(thread: str) -> None:
        state = agent.invoke(
            {"messages": [HumanMessage("Why did reset_smoke fail?")]},
            thread_config(thread),
            **durability(saver),
        )
        assert sum(message.type == "tool" for message in state["messages"]) == len(CALLS)

    return run


def main() -> None:
    parser = modes_parser(__doc__)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    if importlib.util.find_spec("langchain") is None:  # a peer measured, not a dependency
        sys.exit(
            "bench/governed_step.py needs the bench extra (langchain): pip install -e '.[bench]'"
        )
    with tempfile.TemporaryDirectory() as folder:
        manifest = bench_lab(Path(folder))
        scenario = load_scenario(manifest)
        tools_ms = tool_time(scenario, args.reps) * 1000
        rows = []
        with savers(Path(folder), args.postgres or None) as modes:
            for mode, saver, warrant in modes:
                shape = warrant_shape(saver)
                systems = {
                    "warrant": warrant_runner(manifest, warrant.saver, warrant.store),
                    "bare": bare_runner(scenario, saver),
                    "agent": agent_runner(scenario, saver),
                    "shape": lambda thread, shape=shape, saver=saver: shape.invoke(
                        {"turn": 0}, thread_config(thread), **durability(saver)
                    ),
                }
                times: dict[str, list[float]] = {name: [] for name in systems}
                written: dict[str, int] = {}
                for rep in range(args.reps + 1):
                    for name, run in systems.items():  # interleaved
                        thread = f"{name}-{mode}-{rep}-{uuid.uuid4().hex[:6]}"
                        started = time.perf_counter()
                        run(thread)
                        elapsed = time.perf_counter() - started
                        if rep:  # the first round warms caches and is not counted
                            times[name].append(elapsed / TURNS)
                        written[name] = checkpoints(
                            warrant.saver if name == "warrant" else saver, thread
                        )
                ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
                ms["floor"] = ms.pop("shape") + tools_ms
                rows.append((mode, ms, written))
    print(
        f"Per governed step (median of {args.reps} interleaved runs; 8 tool calls and a stop = {TURNS} turns)\n"
    )
    print(
        "| persistence | Warrant ms/step | bare loop ms/step | create_agent ms/step | Warrant / bare | Warrant / create_agent | floor ms/step (shape + tools) | floor / bare | floor / create_agent | checkpoints per step (W / bare / agent) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    ratios: dict[str, float] = {}
    for mode, ms, written in rows:
        per_step = " / ".join(
            f"{written[name] / TURNS:.1f}" for name in ("warrant", "bare", "agent")
        )
        print(
            f"| {mode} | {ms['warrant']:.2f} | {ms['bare']:.2f} | {ms['agent']:.2f} | {ms['warrant'] / ms['bare']:.2f}× | {ms['warrant'] / ms['agent']:.2f}× | {ms['floor']:.2f} | {ms['floor'] / ms['bare']:.2f}× | {ms['floor'] / ms['agent']:.2f}× | {per_step} |"
        )
        ratios[f"governed step, {mode}: Warrant / bare loop"] = ms["warrant"] / ms["bare"]
        ratios[f"governed step, {mode}: Warrant / create_agent"] = ms["warrant"] / ms["agent"]
    print("\n" + json.dumps({"python": sys.version.split()[0]}))
    if args.json:
        args.json.write_text(json.dumps({"ratios": ratios}, indent=2) + "\n")


def tool_time(scenario: Scenario, reps: int) -> float:
    """Seconds a step of the tools' own work (the eight calls, no graph), median of `reps`."""
    times = []
    for rep in range(reps + 1):
        started = time.perf_counter()
        for name, args in CALLS:
            run_tool(scenario, name, args)
        if rep:
            times.append((time.perf_counter() - started) / TURNS)
    return statistics.median(times)


if __name__ == "__main__":
    main()
