"""A child's handoff: what a child investigation returns to the run that delegated it, and how
that run receives it. A handoff, not a summary: the receipts the child gathered, the lines each
showed it, what it could not obtain, its statements marked as the child's, its status and spend.

Children run in parallel, so none can number the run's evidence: a child numbers its own (`E1`
in its lane), and the run renumbers on receipt, in task order, after its own refs (`E4`, with
`lane` `t1` and `lane_ref` `E1`). A recovered run receives the same handoffs in the same order, so
it numbers them alike. Statements keep the child's words and cite the run's refs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contract.codes import ANSWER, OBSERVATION
from guards.citations import base_ref
from nodes.unknowns import NO_ROOT_CAUSE, unknowns_of


def handoff_of(
    task: Mapping[str, Any], values: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The handoff from a child's final state (`values`, its `handover` written) and its evidence
    (with excerpts, in the child's own refs)."""
    report, cursor = values["handover"], values.get("cursor") or {}
    budget = task["grant"]["budget"]
    own_turns = min(values.get("turn", 0), budget["steps"])
    return {
        "order": task["task"]["order"],
        "task": task["task"]["id"],
        "lane": task["lane"],
        "goal": task["task"]["goal"],
        "status": report["status"],
        "budget": task["task"]["budget"],
        "spent": {
            "steps": min(own_turns + cursor.get("child_turns", 0), budget["steps"]),
            "questions": values.get("questions_asked", 0) + cursor.get("child_questions", 0),
            "model_calls": cursor.get("model_calls", 0) + cursor.get("child_model_calls", 0),
        },
        "records": {
            record_id: record["kind"] for record_id, record in task["grant"]["records"].items()
        },
        "families": dict(task["grant"].get("families") or {}),
        "cursor": dict(cursor),
        "evidence": [_receipt(item) for item in evidence],
        "statements": report.get("hypotheses", []),
        "stop_text": report.get("chooser_stop_text", ""),
        "refusals": report.get("refusals", []),
    }


def _receipt(item: Mapping[str, Any]) -> dict[str, Any]:
    """A receipt as handed off: its excerpt stays in the store (by its body digest); the line
    ranges it showed travel with it."""
    kept = {key: value for key, value in item.items() if key not in ("excerpt", "body_missing")}
    return {**kept, "read": line_ranges(line["line"] for line in item.get("excerpt") or ())}


def line_ranges(numbers: Any) -> list[list[int]]:
    """Sorted line numbers as `[first, last]` ranges of consecutive lines."""
    ranges: list[list[int]] = []
    for number in sorted(set(numbers)):
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    return ranges


def received(
    handoffs: Sequence[Mapping[str, Any]], cursor: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The receipts to commit in the run's own lane (renumbered after the cursor's refs, in task
    order) and the handoff documents to keep (citing the run's refs)."""
    next_ref = {OBSERVATION: cursor["observations"] + 1, ANSWER: cursor["answers"] + 1}
    receipts, documents = [], []
    for handoff in sorted(handoffs, key=lambda handoff: handoff["order"]):
        refs: dict[str, str] = {}
        for item in handoff["evidence"]:
            prefix = item["ref"][0]
            refs[item["ref"]] = f"{prefix}{next_ref[prefix]}"
            next_ref[prefix] += 1
        mine = [_renumbered(item, handoff["lane"], refs) for item in handoff["evidence"]]
        receipts += mine
        documents.append(_document(handoff, refs, mine))
    return receipts, documents


def _renumbered(item: Mapping[str, Any], lane: str, refs: Mapping[str, str]) -> dict[str, Any]:
    """A child's receipt in this run's numbering. One the child itself received from its own child
    keeps the lane that executed it (`t1/g1`), its ref there and its call id, already in the run's
    namespace: the ledger of that lane is the one that vouches for it."""
    renumbered = {key: value for key, value in item.items() if key != "read"}
    renumbered["ref"] = refs[item["ref"]]
    if "lane" in item:  # handed up from a grandchild: already named by the lane that ran it
        return renumbered
    renumbered |= {"lane": lane, "lane_ref": item["ref"]}
    if "call_id" in item:  # a child's call id, in the run's namespace of call ids
        renumbered["call_id"] = f"{lane}/{item['call_id']}"
    return renumbered


KEPT = (
    "order",
    "task",
    "lane",
    "goal",
    "status",
    "budget",
    "spent",
    "cursor",
    "stop_text",
    "refusals",
)
"""What a handoff document keeps of the handoff as the child gave it; `cursor` is the child's
own (its ledger's length and last digest), so the run's record vouches for the child's ledger."""


def _renamed(citation: str, refs: Mapping[str, str]) -> str:
    """A child's citation in this run's numbering, its line part kept (`E1:L23` → `E3:L23`)."""
    base, _, lines = citation.partition(":")
    return f"{refs[base]}:{lines}" if lines else refs[base]


def _document(
    handoff: Mapping[str, Any], refs: Mapping[str, str], receipts: list[dict[str, Any]]
) -> dict[str, Any]:
    by = f"child:{handoff['lane']}"
    statements = [
        {
            **statement,
            "refs": [_renamed(ref, refs) for ref in statement["refs"] if base_ref(ref) in refs],
            "by": by,
        }
        for statement in handoff["statements"]
    ]
    records = {record_id: {"kind": kind} for record_id, kind in handoff["records"].items()}
    shown = {
        "grant": {"records": records, "families": handoff.get("families") or {}},
        "refusals": handoff["refusals"],
        "status": handoff["status"],
    }
    unknowns = [note for note in unknowns_of(shown, receipts) if note != NO_ROOT_CAUSE]
    return {
        **{key: handoff[key] for key in KEPT},
        "evidence": [receipt["ref"] for receipt in receipts],
        "refs": dict(refs),
        "read": [
            {"ref": refs[item["ref"]], "record": item.get("record"), "lines": item.get("read", [])}
            for item in handoff["evidence"]
        ],
        "unknowns": unknowns,
        "statements": statements,
    }
