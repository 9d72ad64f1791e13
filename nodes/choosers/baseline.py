"""The triage baseline: what `warrant run` does with a scenario that approves a record family and
names no chooser and no script. It makes no judgment; it reads the triage receipts it is shown.

1. `triage` each family (with the first approved history record, if any), four to a turn;
2. once every family is triaged, for the `TOP_BUCKETS` largest buckets of the whole nightly
   (ranked together, whichever family holds them: `largest`), `readlines` around each one's first
   example, then, with a history, `getrunhistory` of each one's first test;
3. stop, with each bucket the receipts show, largest first, as a statement citing its example's
   line in its member (`E1:runs/N7/a.log:L846`) and the reads made for it (at most ten; a
   chooser's statements: the handover labels them so, never as findings).

Every call is bounded by the evidence and steps left, so a small budget ends the run early with
what it gathered; what the plan then did not read is the handover's unknown, one per bucket
(`skipped`, derived from the receipts by the same plan, never from the chooser's word). Like
every chooser it keeps no state: each turn's plan is derived from the view.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guards.action import MAX_CALLS_PER_TURN, MAX_STATEMENTS
from guards.citations import line_citation
from scenario.profiles import TRIAGE_TOP_BUCKETS

if TYPE_CHECKING:
    from nodes.choosers.view import ChooserView

ACTOR = "chooser:baseline"
BASELINE = "baseline"
"""The chooser spec that names it (`--chooser baseline`, and what a nightly with no script runs)."""
TOP_BUCKETS = TRIAGE_TOP_BUCKETS
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
    ref: str = ""
    """The receipt that shows it."""
    family: str = ""
    """The family it is a bucket of, as the receipt names it."""


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
    """The calls the plan still needs, in order: triage of every family first, and only once each
    is made (or refused) the follow-ups, so that the largest buckets are ranked over the whole
    nightly rather than over the families triaged so far."""
    done = _done(view.evidence)
    refused = {
        _key(call.get("name", ""), call.get("args") or {})
        for refusal in view.refusals
        if isinstance(call := refusal.get("call"), dict)
    }
    history = _history(view.records)
    pending = False
    for family in view.families:
        args: dict[str, Any] = {"family": family["glob"]}
        if history:
            args["history"] = history
        if _key("triage", args) not in done:
            pending = pending or _key("triage", args) not in refused
            yield {"name": "triage", "args": args}
    if pending:
        return
    for _, call in follow_ups(view.evidence, history):
        if _key(call["name"], call["args"]) not in done:
            yield call


def follow_ups(
    evidence: Sequence[Mapping[str, Any]], history: str | None
) -> list[tuple[Bucket, dict[str, Any]]]:
    """The reads the plan makes, each with its bucket: the lines around the example of each of
    the nightly's largest buckets, then, with a history, each one's first test's rows."""
    top = largest(_triaged(evidence))[:TOP_BUCKETS]
    calls = [(bucket, {"name": "readlines", "args": _around(bucket)}) for bucket in top]
    if history:
        calls += [
            (bucket, {"name": "getrunhistory", "args": _rows(history, bucket)})
            for bucket in top
            if bucket.tests
        ]
    return calls


def skipped(
    evidence: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]
) -> list[tuple[Bucket, list[str]]]:
    """Each of the nightly's largest buckets with the reads the plan made none of (`readlines`,
    `getrunhistory`), in rank order: what a budget that ran out left unread."""
    done = _done(evidence)
    missing: dict[Bucket, list[str]] = {}
    for bucket, call in follow_ups(evidence, _history(records)):
        if _key(call["name"], call["args"]) not in done:
            missing.setdefault(bucket, []).append(call["name"])
    return list(missing.items())


def largest(items: Sequence[Mapping[str, Any]]) -> list[Bucket]:
    """Every bucket the triage receipts show, largest first across them all: by count, then the
    receipt's order, then the receipt's own order (its label). The family does not rank it."""
    ranked = [
        (-bucket.count, order, place, bucket)
        for order, item in enumerate(items)
        for place, bucket in enumerate(buckets_of(item))
    ]
    return [bucket for *_, bucket in sorted(ranked, key=lambda row: row[:3])]


def _around(bucket: Bucket) -> dict[str, Any]:
    start = max(1, bucket.line - AROUND)
    return {"path": bucket.member, "start": start, "count": 2 * AROUND + 1}


def _rows(history: str, bucket: Bucket) -> dict[str, Any]:
    return {"path": history, "test": bucket.tests[0], "limit": 10}


def _stop(view: ChooserView) -> dict[str, Any]:
    hypotheses = []
    buckets = largest(_triaged(view.evidence))
    for bucket in buckets[:MAX_STATEMENTS]:
        cited = line_citation(bucket.ref, bucket.line, bucket.member)
        refs = [cited, *_follow_ups(view.evidence, bucket)]
        tests = ", ".join(bucket.tests) or "unnamed"
        status = f" ({bucket.status} against the history)" if bucket.status else ""
        statement = (
            f"{bucket.label} of {bucket.family}: {bucket.count} failure(s) share the first"
            f" error {bucket.signature!r}{status}; tests {tests}; first example"
            f" {bucket.member}:{bucket.line}, as the triage receipt shows it."
        )
        hypotheses.append({"statement": statement[:1000], "refs": refs})
    triaged = len(_triaged(view.evidence))
    text = (
        f"Triage baseline: {triaged} famil{'y' if triaged == 1 else 'ies'} triaged. The buckets"
        " are the triage receipts' grouping of first errors, read back; which change caused them"
        " is not established here."
        if triaged
        else "Triage baseline: no family was triaged (the budget or the grant allowed none)."
    )
    if len(buckets) > MAX_STATEMENTS:
        text += (
            f" The receipts show {len(buckets) - MAX_STATEMENTS} smaller bucket(s) not stated here"
            f" (a stop holds {MAX_STATEMENTS} statements)."
        )
    return {
        "summary": "Triage baseline complete.",
        "message": {"kind": "stop", "text": text, "hypotheses": hypotheses},
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
            found.append(
                Bucket(
                    match[1],
                    count,
                    tests,
                    signature,
                    status,
                    match[2],
                    int(match[3]),
                    str(item.get("ref", "")),
                    str(item.get("record", "")),
                )
            )
    return found


def _tests(listed: str) -> tuple[str, ...]:
    """`a, b and 3 more` → (`a`, `b`)."""
    named = re.sub(r" and \d+ more$", "", listed)
    return tuple(test for test in named.split(", ") if test)


def _follow_ups(evidence: Sequence[Mapping[str, Any]], bucket: Bucket) -> list[str]:
    """The refs of the reads made for a bucket: the lines around its example, its test's rows."""
    refs = []
    for item in evidence:
        args = item.get("args") or {}
        if item.get("error") is not None:
            continue
        if item.get("tool") == "readlines" and args.get("path") == bucket.member:
            if args.get("start", 0) <= bucket.line < args.get("start", 0) + args.get("count", 0):
                refs.append(item["ref"])
        elif item.get("tool") == "getrunhistory" and bucket.tests[:1] == (args.get("test"),):
            refs.append(item["ref"])
    return refs


def _triaged(evidence: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [item for item in evidence if item.get("tool") == "triage" and not item.get("error")]


def _history(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The first approved history record, which every triage call and history read names."""
    return next((record["id"] for record in records if record["kind"] == "history"), None)


def _done(evidence: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The calls made, as `_key` compares them (a failed one too: it is not made again)."""
    return {_key(item["tool"], item["args"]) for item in evidence if "tool" in item}


def _key(tool: str, args: Mapping[str, Any]) -> tuple[str, str]:
    """A call as the plan compares it with a receipt's validated arguments (unset ones left out)."""
    return tool, repr(sorted((name, value) for name, value in args.items() if value is not None))
