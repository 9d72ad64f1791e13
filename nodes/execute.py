"""The execute node: runs one approved call and leaves its receipt, the evidence item.

It receives a single call through `Send` (one task per call) — not a `ToolNode`, which re-runs
finished calls when a node restarts. A call whose receipt exists is never run again: the guard
refuses a known call id, and a receipt is committed once, under its ref. Before the tool runs, the
call's intent is recorded in the store: a call cut by a crash after its tool ran and before its
receipt was saved runs again, and its receipt says which attempt it was (the earlier one may have
run: an uncertain effect stays uncertain).
Arguments are re-validated here: the tool layer denies by default even if the guard were bypassed.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from contract.codes import EventKind, RefusalCode
from guards.hooks import ReceiptView, load_hooks, narrowed
from guards.redaction import mask_labels
from guards.refusals import Refusal
from nodes.context import WarrantContext, event, now
from nodes.evidence import evidence_item
from nodes.integrity import run_scope
from nodes.intents import intend
from nodes.record import receipt_digest, with_body_ref
from tools.args import ToolArgs
from tools.catalog import ToolSpec, tools_of
from tools.errors import RecordRefusal
from tools.excerpt import Excerpt
from tools.records.hookspec import HookEntry, RedactEntry
from tools.records.reading import reading
from tools.records.registry import Record, pinned_record


def execute(task: dict[str, Any], runtime: Runtime[WarrantContext]) -> dict[str, Any]:
    call = task["call"]
    store, scope = runtime.store, run_scope()
    attempt = intend(store, scope, call["id"], now(runtime))
    spec = tools_of(task["profile"])[call["name"]]
    admitted = {field: Record.model_validate(record) for field, record in task["records"].items()}
    args = spec.args_model.model_validate(call["args"])
    records = admitted
    try:
        records = {
            field: pinned_record(task["manifest"], task["manifest_sha256"], record)
            for field, record in admitted.items()
        }
        excerpt, error = _read(spec, args, records, task, now(runtime)), None
    except RecordRefusal as refusal:
        excerpt, error = None, refusal
    except (OSError, EOFError, zlib.error) as exc:  # gzip: a cut stream, corrupt data
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        excerpt, error = (
            None,
            RecordRefusal(RefusalCode.RECORD_UNAVAILABLE, f"read failed: {reason}"),
        )
    item = evidence_item(call, records, excerpt, error, task["turn"])
    hooked = _post_call(task, item, now(runtime)) if excerpt is not None else {}
    item = with_body_ref(item)
    if attempt > 1:
        item["attempt"] = attempt
    done = event(
        EventKind.EXECUTED,
        task["turn"],
        f"tool:{spec.name}",
        now(runtime),
        call_id=call["id"],
        ref=item["ref"],
        record=item["record"],
        outcome=error.code if error else "ok",
        attempt=attempt,
        receipt=receipt_digest(item),
    )
    return {"evidence": [item], "events": [done, *hooked.get("events", [])]} | (
        {"refusals": hooked["refusals"]} if hooked.get("refusals") else {}
    )


def _post_call(task: dict[str, Any], item: dict[str, Any], at: float) -> dict[str, Any]:
    """The scenario's post-call hooks on a copy of the receipt: what the model is to be shown
    goes on the item (`shown`); a hook that fails or rewrites a fact is a refusal, and the model is
    shown no body. The receipt is never changed."""
    entries = [HookEntry.model_validate(entry) for entry in task.get("hooks", ())]
    entries = [entry for entry in entries if entry.when == "post_call"]
    if not entries:
        return {}
    redact = [RedactEntry.model_validate(entry) for entry in task.get("redact", ())]
    hooks = load_hooks(entries, redact, Path(task["manifest"]).parent)
    lines = tuple((line["line"], line["text"]) for line in item["excerpt"])
    receipt = ReceiptView(item["ref"], item["tool"], item["record"], item["summary"], lines)
    projection, failed = narrowed(hooks, receipt, mask_labels(redact))
    names = [hook.name for hook in hooks]
    if failed is None:
        if projection is not None:
            item["shown"] = {
                "by": names,
                "summary": projection.summary,
                "excerpt": [{"line": number, "text": text} for number, text in projection.lines],
            }
        return {}
    hook, why = failed
    code = RefusalCode.HOOK_REWROTE_FACT
    item["shown"] = {"by": names, "withheld": f"{hook.owner}: {why}"}
    refusal = Refusal(
        code, hook.owner, f"{item['ref']}: {why}; the model is shown no body", task["call"]
    ).to_dict()
    return {
        "refusals": [{"turn": task["turn"], **refusal}],
        "events": [event(EventKind.REFUSED, task["turn"], hook.owner, at, **refusal)],
    }


def _read(
    spec: ToolSpec, args: ToolArgs, records: dict[str, Record], task: dict[str, Any], at: float
) -> Excerpt:
    """The tool's excerpt, read within the call's time limit and the run's deadline, from the
    versions of the records admitted (else a `RecordRefusal`)."""
    left = task["deadline_at"] - at
    call_s = task["call_s"]
    if left <= 0:
        raise RecordRefusal(
            RefusalCode.DEADLINE_PASSED, "the run's deadline passed before the call ran"
        )
    if left < call_s:
        cut = (RefusalCode.DEADLINE_PASSED, "the run's deadline passed while the call ran")
    else:
        cut = (
            RefusalCode.TOOL_TIMEOUT,
            f"the call ran past its limit of {call_s}s (budget.call_s)",
        )
    with reading(min(left, call_s), *cut) as session:
        excerpt = spec.run(args, records)
        session.verify()
    return excerpt
