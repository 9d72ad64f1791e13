"""The documents the delegation tests write: R44's failing tests' logs, a delegation of tasks,
a search and a stop (`test_children.py`, `test_delegation_limits.py`)."""

from __future__ import annotations

from typing import Any

LOGS = [
    f"lab/runs/R44/{test}.log" for test in ("reset_smoke", "reset_warm", "dma_burst", "irq_stress")
]
HISTORY = "lab/history/nightly.csv"


def delegate(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"summary": "delegate", "message": {"kind": "delegate", "tasks": list(tasks)}}


def task(
    task_id: str, records: list[str], steps: int = 2, evidence: int = 1, **extra: Any
) -> dict[str, Any]:
    return {
        "id": task_id,
        "goal": f"child {task_id}",
        "records": records,
        "budget": {"steps": steps, "evidence": evidence, **extra},
    }


def search(call_id: str, path: str, query: str = "UVM_ERROR") -> dict[str, Any]:
    return {
        "summary": "search",
        "tool_calls": [
            {"id": call_id, "name": "searchlogs", "args": {"path": path, "query": query}}
        ],
    }


STOP = {"summary": "stop", "message": {"kind": "stop", "text": "done"}}
