"""What the memory tests share: the lab's project, a run's config, a canary note, the recall and
remember documents, a manifest with memory on, and a run started, replied to and read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from graph.runs.interactions import resume_command
from guards.recall import RECALL
from nodes import memory
from tests.helpers import recorded, write_manifest

LAB = memory.Scope("team")
CONFIG = {"configurable": {"thread_id": "r1"}}
CANARY = "CANARY-7f3a RST_CHK clk_en late after release: tracked as BUG-1234"


def recall(call_id: str, query: str, **extra: Any) -> dict[str, Any]:
    return {
        "summary": "look into memory",
        "tool_calls": [{"id": call_id, "name": RECALL, "args": {"query": query, **extra}}],
    }


def remember(text: str, **extra: Any) -> dict[str, Any]:
    return {"summary": "worth keeping", "message": {"kind": "remember", "text": text, **extra}}


def with_memory(scenario_dir: Path, project: str = "team", **budget: int) -> Path:
    manifest = write_manifest(scenario_dir, **budget)
    text = manifest.read_text().replace(
        'profile = "triage"', f'profile = "triage"\nmemory = {{ project = "{project}" }}'
    )
    manifest.write_text(text)
    return manifest


def start(manifest: Path, chooser: str, store: InMemoryStore):
    graph = compile_graph(InMemorySaver(), store)
    graph.invoke({"scenario": str(manifest), "chooser": chooser}, CONFIG, durability="sync")
    return graph


def reply(graph, body: dict[str, Any]) -> dict[str, Any]:
    graph.invoke(
        resume_command(graph.get_state(CONFIG), lambda kind: body, None), CONFIG, durability="sync"
    )
    return recorded(graph, CONFIG)


def saved(store: InMemoryStore, text: str, signature: str = "", at: float = 1.0) -> dict[str, Any]:
    return memory.save(store, LAB, text, "alice", at, signature)
