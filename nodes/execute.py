"""The execute node: runs one approved call and leaves its receipt, the evidence item.

It receives a single call through `Send` (one task per call) — not a `ToolNode`, which re-runs
finished calls when a node restarts. A call whose receipt exists is never run again: the state's
evidence reducer keeps the first item per call id, and the guard refuses a known call id.
Arguments are re-validated here: the tool layer denies by default even if the guard were bypassed.
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.runtime import Runtime

from nodes.context import WarrantContext, event, now
from nodes.evidence import evidence_item
from tools.catalog import tools_of
from tools.errors import RecordRefusal
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
    except (OSError, EOFError, zlib.error) as exc:  # gzip: a cut stream, corrupt data
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        excerpt, error = None, RecordRefusal("record_unavailable", f"read failed: {reason}")
    item = evidence_item(call, records, excerpt, error, task["turn"])
    done = event(
        "executed", task["turn"], f"tool:{spec.name}", now(runtime),
        call_id=call["id"], ref=item["ref"], record=item["record"], outcome=error.code if error else "ok",
    )  # fmt: skip
    return {"evidence": [item], "events": [done]}
