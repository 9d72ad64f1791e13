"""What a person watching the run in LangGraph Studio (or Agent Chat UI) sees in its state.

The run's record lives in the store, so its state holds hashes and counters. Two small channels
say what happened: `view`, this step's proposal, decision, receipts and refusals, replaced at
every step (never accumulated: a checkpoint stays the same size however long the run), and
`messages`, the goal as the person's message and the published handover as the agent's, in the
shape chat clients read. Both are bounded, and both are derived from what the run recorded; they
grant nothing and nothing reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from guards.finalize import ended_as

MAX_TEXT = 240
MAX_ITEMS = 12
MAX_MESSAGE_CHARS = 6000


def _clip(text: object, limit: int = MAX_TEXT) -> str:
    shown = str(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def step_view(
    step: str, update: Mapping[str, Any], arrived: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """The `view` of one step, from what it wrote (its node's `update`) and committed (`arrived`,
    the last step's arrivals); never from the state it was given, which may hold what the run
    did not write."""
    receipts = [item["evidence"] for item in arrived if isinstance(item.get("evidence"), Mapping)]
    receipts += [item for item in update.get("evidence") or () if isinstance(item, Mapping)]
    refusals = [item for item in update.get("refusals") or () if isinstance(item, Mapping)]
    proposal, decision, turn = update.get("proposal"), update.get("decision"), update.get("turn")
    view: dict[str, Any] = {"step": step}
    if type(turn) is int:
        view["turn"] = turn
    if isinstance(proposal, Mapping):
        view["proposal"] = _clip(_summary_of(proposal.get("raw")))
    if isinstance(decision, Mapping):
        view["decision"] = _clip(f"{decision.get('outcome', '')}: {decision.get('summary', '')}")
    view["evidence"] = [
        {
            "ref": item.get("ref"),
            "tool": item.get("tool"),
            "record": _clip(item.get("record"), 120),
            "summary": _clip(item.get("summary", "")),
            **({"computed": True} if item.get("computed") else {}),
        }
        for item in receipts[:MAX_ITEMS]
    ]
    view["refusals"] = [
        {
            "code": item.get("code"),
            "owner": item.get("owner"),
            "detail": _clip(item.get("detail", "")),
        }
        for item in refusals[:MAX_ITEMS]
    ]
    return view


def _summary_of(raw: Any) -> str:
    if isinstance(raw, Mapping):
        return str(raw.get("summary", ""))
    return str(raw or "")


def goal_message(goal: str) -> dict[str, Any]:
    return {"type": "human", "id": "goal", "content": _clip(goal, 2000)}


def handover_message(report: Mapping[str, Any]) -> dict[str, Any]:
    """The handover as the agent's message: its status, statement, evidence (one line each),
    statements marked as the chooser's, unknowns; bounded."""
    lines = [
        f"{'Ended' if report.get('ending') else 'Status'}: {ended_as(report)} after {report.get('turns', 0)} turn(s).",
        str(report.get("statement", "")),
        "",
        "Evidence:",
        *(
            f"- {item.get('ref')} {item.get('tool')} · {item.get('record')} · {_clip(item.get('summary', ''))}"
            + (" (computed, not a source fact)" if item.get("computed") else "")
            for item in report.get("evidence", ())[:40]
        ),
        "",
        "The chooser's statements (not findings):",
        *(
            f"- {_clip(h.get('statement', ''))} [{', '.join(h.get('refs', ()))}]"
            for h in report.get("hypotheses", ())[:10]
        ),
        "",
        "Unknowns:",
        *(f"- {_clip(unknown)}" for unknown in report.get("unknowns", ())[:20]),
    ]
    revision = int(report.get("revision") or 1)
    return {
        "type": "ai",
        "id": f"handover-r{revision}",
        "content": _clip("\n".join(lines), MAX_MESSAGE_CHARS),
    }
