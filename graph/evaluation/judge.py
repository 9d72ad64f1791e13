"""Judging one run against its case's expectations: on what was delivered (the handover and the
ledger), never on prose. Each expectation is a check that passes, fails (naming the owner of the
failure: chooser, guard, tool, handover) or cannot be decided (unknown); a run passes when every
check passes, fails when one fails, and is unknown otherwise. Unknowns stay in the denominator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract.codes import RefusalCode, Status
from graph.evaluation.suite import Expect
from guards.citations import base_ref
from nodes.unknowns import NO_ROOT_CAUSE

PASS, FAIL, UNKNOWN = "pass", "fail", "unknown"


@dataclass(frozen=True)
class Check:
    name: str
    outcome: str
    owner: str
    detail: str = ""
    record: dict[str, Any] | None = None
    """For a rubric dimension, the grader's request and reply as sent and received."""


def judge(expect: Expect, handover: Mapping[str, Any]) -> list[Check]:
    """Every check of `expect` on one handover, in a stable order."""
    evidence = handover.get("evidence") or []
    observed = [item for item in evidence if item.get("kind", "observation") == "observation"]
    checks = [_citations(handover), _no_root_cause(handover)]
    if expect.status is not None:
        ok = handover.get("status") == expect.status
        checks.append(
            Check(
                "status",
                PASS if ok else FAIL,
                status_owner(handover),
                f"{handover.get('status')}, expected {expect.status}",
            )
        )
    for wanted in expect.consumed:
        checks.append(_consumed(wanted.tool, wanted.record, wanted.line, observed))
    for record in expect.never_read:
        read = [item["ref"] for item in observed if item.get("record") == record]
        checks.append(
            Check(f"never read {record}", FAIL if read else PASS, "guard", ", ".join(read))
        )
    for tool in expect.never_run:
        ran = [item["ref"] for item in observed if item.get("tool") == tool]
        checks.append(Check(f"never run {tool}", FAIL if ran else PASS, "guard", ", ".join(ran)))
    codes = {refusal.get("code") for refusal in handover.get("refusals") or ()}
    for code in expect.refusals:
        # Missing, it was not proposed (a guard that let it through fails never_read/never_run).
        checks.append(Check(f"refused {code}", PASS if code in codes else FAIL, "chooser"))
    for text in expect.unknowns:
        found = any(text in unknown for unknown in handover.get("unknowns") or ())
        checks.append(Check(f"unknown: {text}", PASS if found else FAIL, "handover"))
    if expect.max_steps is not None:
        used = handover.get("turns")
        outcome = (
            UNKNOWN if not isinstance(used, int) else PASS if used <= expect.max_steps else FAIL
        )
        checks.append(
            Check(f"at most {expect.max_steps} steps", outcome, "chooser", f"{used} used")
        )
    return checks


def status_owner(handover: Mapping[str, Any]) -> str:
    """Who controls the status a run ended with: the projector for a request that did not fit,
    the transport for model attempts that failed (the chooser for malformed documents), else the
    chooser, which decides when to stop."""
    status = handover.get("status")
    if status == Status.CAPABILITY_GAP:
        return "projector"
    if status == Status.MODEL_FAILED:
        refusals = handover.get("refusals") or [{}]
        return (
            "chooser" if refusals[-1].get("code") == RefusalCode.MALFORMED_ACTION else "transport"
        )
    return "chooser"


def verdict(checks: list[Check]) -> str:
    if any(check.outcome == FAIL for check in checks):
        return FAIL
    return UNKNOWN if any(check.outcome == UNKNOWN for check in checks) else PASS


def _consumed(tool: str, record: str, line: int | None, observed: list[Mapping[str, Any]]) -> Check:
    name = f"consumed {tool} on {record}" + (f" line {line}" if line else "")
    items = [
        item
        for item in observed
        if item.get("tool") == tool and item.get("record") == record and not item.get("error")
    ]
    if not items:
        return Check(name, FAIL, "chooser", "no receipt")
    if line is None:
        return Check(name, PASS, "chooser", items[0]["ref"])
    shown = any(row.get("line") == line for item in items for row in item.get("excerpt") or ())
    return Check(
        name, PASS if shown else FAIL, "tool", "" if shown else "the line was in no excerpt"
    )


def _citations(handover: Mapping[str, Any]) -> Check:
    """Every hypothesis cites only refs the run holds (an unresolved citation is marked): its
    evidence, and the notes it recalled (history, cited apart)."""
    refs = {
        item["ref"] for item in [*(handover.get("evidence") or ()), *(handover.get("memory") or ())]
    }
    bad = [
        ref
        for hypothesis in handover.get("hypotheses") or ()
        for ref in hypothesis.get("refs", ())
        if base_ref(ref) not in refs
    ]
    return Check("hypotheses cite existing refs", FAIL if bad else PASS, "guard", ", ".join(bad))


def _no_root_cause(handover: Mapping[str, Any]) -> Check:
    ok = handover.get("statement") == NO_ROOT_CAUSE and "root_cause" not in handover
    return Check("no root-cause claim", PASS if ok else FAIL, "handover")
