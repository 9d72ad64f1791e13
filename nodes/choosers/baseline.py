"""The triage baseline: what `warrant run` does with a scenario that approves a record family and
names no chooser and no script. It makes no judgment; it reads the triage receipts it is shown.

1. `triage` each family (with the first approved history record, if any), four to a turn;
2. for the largest buckets of each receipt, `readlines` around the bucket's first example and,
   with a history, `getrunhistory` of the bucket's first test;
3. stop, with each bucket a receipt shows as a statement citing the receipts (at most ten; a
   chooser's statements: the handover labels them so, never as findings).

Every call is bounded by the evidence and steps left, so a small budget ends the run early with
what it gathered. Like every chooser it keeps no state: each turn's plan is derived from the view.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guards.action import MAX_CALLS_PER_TURN

if TYPE_CHECKING:
    from nodes.choosers.view import ChooserView

ACTOR = "chooser:baseline"
TOP_BUCKETS = 3
"""Buckets of each family read further."""
AROUND = 5
"""Lines read before a bucket's first example (and as many after)."""
_EXAMPLE = re.compile(r"^(B\d+) (\S+):(\d+): ")
_BUCKET = re.compile(
    r"(B\d+) ×(\d+) \[([^\]]*)\] (?P<q>['\"])(.*?)(?P=q), first at [^;]*(?:; (known|new))?"
)


@dataclass(frozen=True)
class Bucket:
    """A bucket as a triage receipt shows it."""

    label: str
    count: int
    tests: tuple[str, ...]
    signature: str
    status: str
    """`known`, `new`, or empty without a history."""
    member: str
    line: int


@dataclass(frozen=True)
class TriageBaseline:
    actor: str = ACTOR

    def choose(self, view: ChooserView) -> dict[str, Any]:
        return next_action(view)


def next_action(view: ChooserView) -> dict[str, Any]:
    """This turn's action: the triage calls still to make, else the follow-ups, else the stop."""
    room = min(MAX_CALLS_PER_TURN, int(view.budget_left["evidence"]))
    if view.budget_left["steps"] > 1 and room > 0:
        calls = list(_wanted(view))[:room]
        if calls:
            numbered = [
                {"id": f"t{view.turn}c{index}", **call} for index, call in enumerate(calls, 1)
            ]
            names = ", ".join(call["name"] for call in calls)
            return {"summary": f"Triage baseline: {names}.", "tool_calls": numbered}
    return _stop(view)


def _wanted(view: ChooserView) -> Iterator[dict[str, Any]]:
    """The calls the plan still needs, in order: triage of every family first."""
    done = {_key(item["tool"], item["args"]) for item in view.evidence if "tool" in item}
    history = _history(view)
    for family in view.families:
        args: dict[str, Any] = {"family": family["glob"]}
        if history:
            args["history"] = history
        if _key("triage", args) not in done:
            yield {"name": "triage", "args": args}
    for item in _triaged(view):
        for bucket in buckets_of(item)[:TOP_BUCKETS]:
            start = max(1, bucket.line - AROUND)
            read = {"path": bucket.member, "start": start, "count": 2 * AROUND + 1}
            if _key("readlines", read) not in done:
                yield {"name": "readlines", "args": read}
            if history and bucket.tests:
                rows = {"path": history, "test": bucket.tests[0], "limit": 10}
                if _key("getrunhistory", rows) not in done:
                    yield {"name": "getrunhistory", "args": rows}


def _stop(view: ChooserView) -> dict[str, Any]:
    hypotheses = []
    for item in _triaged(view):
        for bucket in buckets_of(item):
            refs = [f"{item['ref']}:L{bucket.line}", *_follow_ups(view, bucket)]
            tests = ", ".join(bucket.tests) or "unnamed"
            status = f" ({bucket.status} against the history)" if bucket.status else ""
            statement = (
                f"{bucket.label} of {item['record']}: {bucket.count} failure(s) share the first"
                f" error {bucket.signature!r}{status}; tests {tests}; first example"
                f" {bucket.member}:{bucket.line}, as the triage receipt shows it."
            )
            hypotheses.append({"statement": statement[:1000], "refs": refs})
    triaged = len(_triaged(view))
    text = (
        f"Triage baseline: {triaged} famil{'y' if triaged == 1 else 'ies'} triaged. The buckets"
        " are the triage receipts' grouping of first errors, read back; which change caused them"
        " is not established here."
        if triaged
        else "Triage baseline: no family was triaged (the budget or the grant allowed none)."
    )
    return {
        "summary": "Triage baseline complete.",
        "message": {"kind": "stop", "text": text, "hypotheses": hypotheses[:10]},
    }


def buckets_of(item: Mapping[str, Any]) -> list[Bucket]:
    """The buckets a triage receipt shows, largest first: each example line (`B1 member:line:
    text`) with its count and tests from the summary."""
    shown = {
        label: (int(count), _tests(tests), signature, status)
        for label, count, tests, _, signature, status in _BUCKET.findall(
            str(item.get("summary", ""))
        )
    }
    found = []
    for line in item.get("excerpt") or ():
        match = _EXAMPLE.match(str(line.get("text", "")))
        if match and match[1] in shown:
            count, tests, signature, status = shown[match[1]]
            found.append(Bucket(match[1], count, tests, signature, status, match[2], int(match[3])))
    return found


def _tests(listed: str) -> tuple[str, ...]:
    """`a, b and 3 more` → (`a`, `b`)."""
    named = re.sub(r" and \d+ more$", "", listed)
    return tuple(test for test in named.split(", ") if test)


def _follow_ups(view: ChooserView, bucket: Bucket) -> list[str]:
    """The refs of the reads made for a bucket: the lines around its example, its test's rows."""
    refs = []
    for item in view.evidence:
        args = item.get("args") or {}
        if item.get("error") is not None:
            continue
        if item.get("tool") == "readlines" and args.get("path") == bucket.member:
            if args.get("start", 0) <= bucket.line < args.get("start", 0) + args.get("count", 0):
                refs.append(item["ref"])
        elif item.get("tool") == "getrunhistory" and bucket.tests[:1] == (args.get("test"),):
            refs.append(item["ref"])
    return refs


def _triaged(view: ChooserView) -> list[Mapping[str, Any]]:
    return [item for item in view.evidence if item.get("tool") == "triage" and not item["error"]]


def _history(view: ChooserView) -> str | None:
    return next((record["id"] for record in view.records if record["kind"] == "history"), None)


def _key(tool: str, args: Mapping[str, Any]) -> tuple[str, str]:
    """A call as the plan compares it with a receipt's validated arguments (unset ones left out)."""
    return tool, repr(sorted((name, value) for name, value in args.items() if value is not None))
