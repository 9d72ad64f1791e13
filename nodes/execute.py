"""The execute node: runs one approved call and leaves its receipt, the evidence item.

It receives a single call through `Send` (one task per call) — not a `ToolNode`, which re-runs
finished calls when a node restarts. A call whose receipt exists is never run again: the guard
refuses a known call id, and a receipt is committed once, under its ref. Before the tool runs, the
call's intent is recorded in the store: a call cut by a crash after its tool ran and before its
receipt was saved runs again, and its receipt says which attempt it was (the earlier one may have
run: an uncertain effect stays uncertain).
The call's arguments are not validated again here: the guard validated them once, with the tool's
strict model (`guards.checks.parse_proposal`), and this node rebuilds that model from them
(`_approved_args`). That is safe because the task is sealed: the guard (or the router that sends
a call again on resume, from the sealed decision in state) seals it for this run, and the task runs
only when its seal holds (`graph.governed.task`, `ledger.integrity`); a task the run did not send,
or one with arguments changed, ends the run `state_tampered` before anything is read. What a tool
reads is still only the admitted record its call names, pinned to its manifest and sha256 here.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from contract.codes import EventKind, RefusalCode
from contract.errors import RecordRefusal
from contract.shapes import Event, ExecuteTask
from contract.state import StepUpdate
from guards.hooks import ReceiptView, load_hooks, narrowed
from guards.redaction import mask_labels
from guards.refusals import Refusal
from ledger.bodies import receipt_digest, with_body_ref
from ledger.context import WarrantContext, event, now
from ledger.integrity import run_scope
from ledger.members import family_records
from ledger.record import RunRecord
from nodes.evidence import evidence_item, mcp_item
from nodes.reports import with_report_body
from scenario.hookspec import HookEntry, RedactEntry
from scenario.mcp import AdmittedMcpTool, McpServer
from scenario.reading import reading
from scenario.registry import Family, Record, pinned_members, pinned_record
from tools.args import ToolArgs
from tools.catalog import ToolSpec, tools_of
from tools.excerpt import Excerpt
from tools.mcp.client import McpTimedOut, McpUnavailable
from tools.mcp.client import call as mcp_call
from tools.mcp.excerpt import MAX_RESULT_BYTES, result_excerpt


def execute(task: ExecuteTask, runtime: Runtime[WarrantContext]) -> StepUpdate:
    call = task["call"]
    store, scope = runtime.store, run_scope()
    if store is None:
        raise RuntimeError("the executor needs the run's store: compile the graph with one")
    attempt = RunRecord(store, scope).intend(call["id"], now(runtime))
    if "mcp" in task:
        return _execute_mcp(task, attempt, now(runtime))
    spec = tools_of(task["profile"])[call["name"]]
    admitted = {field: Record.model_validate(record) for field, record in task["records"].items()}
    args = _approved_args(spec, call["args"])
    records = admitted
    try:
        records = {
            field: pinned_record(task["manifest"], task["manifest_sha256"], record)
            for field, record in admitted.items()
        }
        family = _family(task, store)
        excerpt, error = _read(spec, args, records, family, task, now(runtime)), None
    except RecordRefusal as refusal:
        excerpt, error = None, refusal
    except (OSError, EOFError, zlib.error) as exc:  # gzip: a cut stream, corrupt data
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        excerpt, error = (
            None,
            RecordRefusal(RefusalCode.RECORD_UNAVAILABLE, f"read failed: {reason}"),
        )
    receipt: dict[str, Any] = cast(
        "dict[str, Any]",
        evidence_item(dict(call), records, excerpt, error, task["turn"], call.get("family")),
    )
    receipt = with_report_body(store, receipt)
    hooked = _post_call(task, receipt, now(runtime)) if excerpt is not None else {}
    receipt, done = _receipted(task, receipt, attempt, error, now(runtime))
    update: StepUpdate = {"evidence": [receipt], "events": [done, *hooked.get("events", [])]}
    if hooked.get("refusals"):
        update["refusals"] = hooked["refusals"]
    return update


def _execute_mcp(task: ExecuteTask, attempt: int, at: float) -> StepUpdate:
    """An admitted MCP tool's call: sent to its server within the call's limit and the run's
    deadline, its result a bounded, flagged excerpt with the digest of all the server sent; a
    server that fails, hangs or breaks the protocol fails this call (recorded), not the run. A
    write whose earlier attempt was cut by a crash is never sent again: its outcome is unknown."""
    call, pinned = task["call"], task["mcp"]
    tool = AdmittedMcpTool.model_validate(pinned["tool"])
    server = McpServer.model_validate(pinned["server"])
    source = {"record": f"mcp:{call['name']}", "sha256": tool.schema_sha256}
    left = task["deadline_at"] - at
    excerpt, digest, error = None, None, None
    if tool.effects == "write" and attempt > 1:
        error = RecordRefusal(
            RefusalCode.OUTCOME_UNKNOWN,
            f"not sent again: attempt {attempt - 1} was sent to server {server.name!r} before a"
            " crash and its result was never recorded; whether it took effect is unknown until a"
            " person checks the server",
        )
    elif left <= 0:
        error = RecordRefusal(
            RefusalCode.DEADLINE_PASSED, "the run's deadline passed before the call ran"
        )
    else:
        limit = min(left, task["call_s"])
        try:
            called = mcp_call(
                server,
                Path(task["manifest"]).parent,
                tool.tool,
                call["args"],
                limit,
                MAX_RESULT_BYTES,
            )
            excerpt, digest = result_excerpt(call["name"], called), called.sha256
        except McpUnavailable as exc:
            timed_out = isinstance(exc, McpTimedOut)
            code = RefusalCode.TOOL_TIMEOUT if timed_out else RefusalCode.RECORD_UNAVAILABLE
            error = RecordRefusal(code, str(exc))
    share = "any" if tool.share == "remote" else "local"
    item = mcp_item(dict(call), source, digest, excerpt, error, task["turn"], share)
    receipt, done = _receipted(task, cast("dict[str, Any]", item), attempt, error, at)
    return {"evidence": [receipt], "events": [done]}


def _receipted(
    task: ExecuteTask,
    receipt: dict[str, Any],
    attempt: int,
    error: RecordRefusal | None,
    at: float,
) -> tuple[dict[str, Any], Event]:
    """The receipt with its body's digest and its attempt (when a crash cut an earlier one), and
    the `executed` event that records it."""
    receipt = with_body_ref(receipt)
    if attempt > 1:
        receipt["attempt"] = attempt
    call = task["call"]
    done = event(
        EventKind.EXECUTED,
        task["turn"],
        f"tool:{call['name']}",
        at,
        call_id=call["id"],
        ref=receipt["ref"],
        record=receipt["record"],
        outcome=error.code if error else "ok",
        attempt=attempt,
        receipt=receipt_digest(receipt),
    )
    return receipt, done


def _approved_args(spec: ToolSpec, args: dict[str, Any]) -> ToolArgs:
    """The call's arguments as the guard validated them, rebuilt without validating them again:
    `args` is what the tool's model validated and dumped (flat JSON values), carried here in the
    sealed task. For nothing else: any other input must meet the model's `model_validate`."""
    return spec.args_model.model_construct(**args)


def _post_call(task: ExecuteTask, receipt: dict[str, Any], at: float) -> StepUpdate:
    """The scenario's post-call hooks on a copy of the receipt: what the model is to be shown
    goes on the receipt (`shown`); a hook that fails or rewrites a fact is a refusal, and the model is
    shown no body. The receipt is never changed."""
    entries = [HookEntry.model_validate(entry) for entry in task.get("hooks", ())]
    entries = [entry for entry in entries if entry.when == "post_call"]
    if not entries:
        return {}
    redact = [RedactEntry.model_validate(entry) for entry in task.get("redact", ())]
    hooks = load_hooks(entries, redact, Path(task["manifest"]).parent)
    lines = tuple((line["line"], line["text"]) for line in receipt["excerpt"])
    view = ReceiptView(
        receipt["ref"], receipt["tool"], receipt["record"], receipt["summary"], lines
    )
    projection, failed = narrowed(hooks, view, mask_labels(redact))
    names = [hook.name for hook in hooks]
    if failed is None:
        if projection is not None:
            receipt["shown"] = {
                "by": names,
                "summary": projection.summary,
                "excerpt": [{"line": number, "text": text} for number, text in projection.lines],
            }
        return {}
    hook, why = failed
    code = RefusalCode.HOOK_REWROTE_FACT
    receipt["shown"] = {"by": names, "withheld": f"{hook.owner}: {why}"}
    refusal = Refusal(
        code, hook.owner, f"{receipt['ref']}: {why}; the model is shown no body", dict(task["call"])
    )
    return {
        "refusals": [refusal.recorded(task["turn"])],
        "events": [event(EventKind.REFUSED, task["turn"], hook.owner, at, **refusal.to_dict())],
    }


def _family(task: ExecuteTask, store: BaseStore) -> Family | None:
    """A family tool's members, each found again through the admitted manifest; the family as
    the guard approved it (its digest of the admitted members), else a `RecordRefusal`. A glob's
    members are read from the store by their digest (`ledger.members`), a list's from the task."""
    recorded = task["call"].get("family")
    if recorded is None:
        return None
    if "members_digest" in task:
        admitted = list(family_records(store, task["members_digest"]) or ())
    else:
        admitted = [Record.model_validate(member) for member in task.get("members", ())]
    family = Family(recorded["name"], tuple(admitted), recorded.get("glob"))
    if family.sha256 != recorded["sha256"]:
        raise RecordRefusal(
            RefusalCode.RECORD_CHANGED, f"family {family.name} is not the one approved"
        )
    members = pinned_members(task["manifest"], task["manifest_sha256"], admitted)
    return Family(family.name, tuple(members), family.glob)


def _progress(task: ExecuteTask) -> Callable[[int, int], None]:
    """A family call's progress, streamed (LangGraph's `custom` mode) at each whole percent: the
    console shows it, and so does an SDK client whose run streams `custom` (docs/serving.md);
    nothing is recorded, and a run started without that mode publishes nothing."""
    write = get_stream_writer()
    call = task["call"]
    shown = -1

    def tell(done: int, total: int) -> None:
        nonlocal shown
        percent = done * 100 // max(total, 1)
        if percent != shown:
            shown = percent
            write(
                {
                    "progress": {
                        "turn": task["turn"],
                        "call_id": call["id"],
                        "ref": call.get("ref"),
                        "tool": call["name"],
                        "done": done,
                        "total": total,
                    }
                }
            )

    return tell


def _read(
    spec: ToolSpec,
    args: ToolArgs,
    records: dict[str, Record],
    family: Family | None,
    task: ExecuteTask,
    at: float,
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
        try:
            if family is None:
                excerpt = spec.run(args, records)
            else:
                excerpt = spec.run(args, records, family, _progress(task))
        except ArithmeticError as exc:  # a figure no arithmetic keeps (a slack of 1e999)
            raise RecordRefusal(
                RefusalCode.UNREADABLE_FIGURE,
                f"a figure in the record cannot be computed with ({type(exc).__name__}: {exc})",
            ) from exc
        session.verify()
    return excerpt
