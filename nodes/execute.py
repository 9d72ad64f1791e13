"""The execute node: runs one approved call and leaves its receipt, the evidence item.

It receives a single call through `Send` (one task per call) — not a `ToolNode`, which re-runs
finished calls when a node restarts. A call whose receipt exists is never run again: the state's
evidence reducer keeps the first item per call id, and the guard refuses a known call id.
Arguments are re-validated here: the tool layer denies by default even if the guard were bypassed.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from nodes.context import WarrantContext, event, now
from tools.catalog import tools_of
from tools.errors import RecordRefusal
from tools.excerpt import Excerpt
from tools.records import Record


def execute(task: dict[str, Any], runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    call = task["call"]
    spec = tools_of(task["profile"])[call["name"]]
    records = {field: Record.model_validate(record) for field, record in task["records"].items()}
    args = spec.args_model.model_validate(call["args"])
    try:
        excerpt, error = spec.run(args, records), None
    except RecordRefusal as refusal:
        excerpt, error = None, refusal
    except OSError as exc:
        excerpt, error = (
            None,
            RecordRefusal("record_unavailable", f"read failed: {exc.strerror or exc}"),
        )
    item = evidence_item(call, records, excerpt, error, task["turn"])
    done = event(
        "executed", task["turn"], f"tool:{spec.name}", now(runtime),
        call_id=call["id"], ref=item["ref"], record=item["record"], outcome=error.code if error else "ok",
    )  # fmt: skip
    return {"evidence": [item], "events": [done]}


def evidence_item(
    call: dict[str, Any],
    records: dict[str, Record],
    excerpt: Excerpt | None,
    error: RecordRefusal | None,
    turn: int,
) -> dict[str, Any]:
    """An evidence item (DESIGN §6). A failed read is evidence too: it says what could not be seen."""
    primary = next(iter(records.values()))
    sources = [{"record": record.id, "sha256": record.sha256} for record in records.values()]
    base = {
        "ref": call["ref"],
        "call_id": call["id"],
        "turn": turn,
        "tool": call["name"],
        "args": call["args"],
        "record": primary.id,
        "sha256": primary.sha256,
        "sources": sources,
    }
    if error is not None:
        return {**base, "summary": f"could not be read: {error.detail}", "excerpt": [],
                "truncated": False, "flags": [], "error": error.code}  # fmt: skip
    lines = [
        {"line": line.number, "text": line.text, "flags": list(line.flags)}
        for line in excerpt.lines
    ]
    return {**base, "summary": excerpt.summary, "excerpt": lines,
            "truncated": excerpt.truncated, "flags": list(excerpt.flags), "error": None}  # fmt: skip
