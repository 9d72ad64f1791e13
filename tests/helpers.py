"""Helpers shared by the tests: action documents, manifests, an embedded runner, a fake clock."""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from graph.build import compile_graph
from lab import LAB_DIR
from ledger.context import WarrantContext
from ledger.read import materialized
from nodes.memory import shown_notes
from scenario.registry import Record, load_scenario

R42_SCRIPT: list[dict[str, Any]] = tomllib.loads((LAB_DIR / "R42.toml").read_text())["script"]
R42_CALLS = [call["id"] for step in R42_SCRIPT for call in step.get("tool_calls", ())]
"""The call ids of R42's scripted baseline, one a turn, read from its manifest."""
R42_REFS = [f"E{number}" for number in range(1, len(R42_CALLS) + 1)]
R42_TURNS = len(R42_SCRIPT)
"""The baseline's turns: one per call, then its stop."""
R42_EVENTS = 1 + 4 * len(R42_CALLS) + 3
"""Its ledger: admitted; proposed, approved, executing, executed per call; proposed, stopped and
handover at its stop."""
R42_PARTS = ("runs/R42", "spec", "history", "rtl.git")
"""The lab's folders R42's records lie in: a copy of its manifest needs them beside it."""
R42_LOG = "lab/runs/R42/reset_smoke.log"
R42_SPEC = "lab/spec/reset_controller.md"
R42_HISTORY = "lab/history/regressions.csv"
PLAIN_TRIAGE_TOOLS = [
    "searchlogs",
    "readlines",
    "logsummary",
    "readspec",
    "getrunhistory",
    "analyze",
]
"""The tools a triage chooser is shown, in order, where the grant holds no family, PDF, waveform or
repository (R42-memory's, R42-gated's): what their recorded model requests pin."""


def tool_call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """One tool call of an action document."""
    return {"id": call_id, "name": name, "args": args}


def batch(summary: str, *tool_calls: dict[str, Any]) -> dict[str, Any]:
    """An action document proposing `tool_calls` together."""
    return {"summary": summary, "tool_calls": list(tool_calls)}


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """An action document with one tool call."""
    return batch(f"{name} {call_id}", tool_call(call_id, name, **args))


def stop(text: str = "done", **extra: Any) -> dict[str, Any]:
    return {"summary": "stop", "message": {"kind": "stop", "text": text, **extra}}


def scenario_head(
    scenario_id: str, goal: str, *, steps: int, evidence: int, deadline_s: int
) -> str:
    """A triage manifest's first lines, its id, goal and budget: the records and the rest follow."""
    return (
        f'id = "{scenario_id}"\nprofile = "triage"\ngoal = "{goal}"\n'
        f"[budget]\nsteps = {steps}\nevidence = {evidence}\ndeadline_s = {deadline_s}\n"
    )


RUNS_FAMILY = '[[record]]\nglob = "runs/*.log"\nkind = "log"\n'
"""A manifest's record of a family: every log under `runs/`, by one glob."""


def write_manifest(root: Path, body: str = "", *, steps: int = 8, evidence: int = 6) -> Path:
    """A manifest approving the three records of `scenario_dir`, plus any extra TOML."""
    path = root / "scenario.toml"
    path.write_text(
        scenario_head(
            "CC", "Why did fifo_smoke fail?", steps=steps, evidence=evidence, deadline_s=120
        )
        + textwrap.dedent("""\
        [[record]]
        id = "cc/t.log"
        kind = "log"
        path = "logs/t.log"
        [[record]]
        id = "cc/spec.md"
        kind = "spec"
        path = "spec.md"
        [[record]]
        id = "cc/hist.csv"
        kind = "history"
        path = "hist.csv"
        """)
        + textwrap.dedent(body)
    )
    return path


LOCAL_LOG_SCENARIO = """\
id = "LOCAL"
profile = "triage"
goal = "Why did fifo_smoke fail?"
[budget]
steps = 4
evidence = 2
deadline_s = 120
[[record]]
id = "lo/t.log"
kind = "log"
path = "t.log"
share = "local"
"""


def local_log_scenario(root: Path, canary: str, stop_text: str = "read") -> tuple[Path, Path]:
    """A scenario of one `share = "local"` log carrying `canary`, and an action file that
    searches it and stops: (manifest, actions)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.log").write_text(
        f"UVM_ERROR tb/{canary}.sv(4) @ 10: env [{canary}] overflow\nTEST FAILED\n"
    )
    manifest = root / "scenario.toml"
    manifest.write_text(LOCAL_LOG_SCENARIO)
    actions = root / "read.jsonl"
    search = call("c1", "searchlogs", path="lo/t.log", query="UVM_ERROR")
    ending = stop(stop_text, hypotheses=[{"statement": stop_text, "refs": ["E1"]}])
    actions.write_text(json.dumps(search) + "\n" + json.dumps(ending) + "\n")
    return manifest, actions


def run_embedded(
    scenario: str,
    chooser: str = "scripted",
    *,
    context: WarrantContext | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    thread: str = "t1",
    goal: str | None = None,
) -> dict[str, Any]:
    """Run the governed loop in-process to its end and return the final state, with the run's
    record read back from the store (`events`, `evidence`, `model_calls`)."""
    graph = compile_graph(checkpointer or InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    graph.invoke(
        {"scenario": scenario, "chooser": chooser} | ({"goal": goal} if goal else {}),
        config,
        durability="sync",
        context=context or WarrantContext(),
    )
    return recorded(graph, config)


def recorded(graph: CompiledStateGraph, config: dict[str, Any]) -> dict[str, Any]:
    """The thread's state with its record read back from the graph's store, as readers see it."""
    values = graph.get_state(config).values
    return materialized(graph.store, str(config["configurable"]["thread_id"]), values, shown_notes)


class FakeClock:
    """A clock the test moves by hand; its `sleep` (for `WarrantContext.sleep`) moves it at once
    and keeps each wait asked for in `slept`."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def context(self, **fields: Any) -> WarrantContext:
        """A run's context on this clock (and its sleep)."""
        return WarrantContext(clock=self, sleep=self.sleep, **fields)


def one_record(folder: Path, filename: str, kind: str, content: str | bytes) -> Record:
    """A scenario with a single approved record, id `r`, holding `content`; returns that record."""
    path = folder / filename
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    manifest = folder / "one.toml"
    manifest.write_text(
        f'id = "ONE"\nprofile = "triage"\n[[record]]\nid = "r"\nkind = "{kind}"\npath = "{filename}"\n'
    )
    return load_scenario(manifest).records["r"]
