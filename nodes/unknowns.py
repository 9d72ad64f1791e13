"""What stays unknown: derived from the run's records, never from a chooser's claims."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contract.codes import RefusalCode, Status
from nodes.choosers.baseline import BASELINE, TOP_BUCKETS, Bucket, skipped
from nodes.evidence import failed, family_members, told

NO_ROOT_CAUSE = (
    "Root cause: not established. This handover reports evidence and what remains unknown."
)

_STATUS_NOTES = {
    Status.STEP_BUDGET_EXHAUSTED: "The step budget ran out; evidence that further steps would have found is unknown.",
    Status.DEADLINE_PASSED: "The deadline passed; evidence that further steps would have found is unknown.",
    Status.REFUSAL_LIMIT: "The run ended after too many refused proposals; the investigation is incomplete.",
    Status.MODEL_FAILED: "The model failed repeatedly (see the ledger's model attempts); the investigation is incomplete.",
    Status.CAPABILITY_GAP: "The request did not fit the model route's context budget; the investigation is incomplete.",
}


def unknowns_of(state: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    """The unknowns to show a chooser or a person, in a stable order, from the run's state and its
    evidence (read from the store)."""
    grant = state.get("grant", {})
    items = [NO_ROOT_CAUSE, *grant.get("unknowns", ())]
    items += [unknown for item in evidence for unknown in told(item)]
    items += [failed(item) for item in evidence if item.get("error")]
    items += [_may_have_run(item) for item in evidence if item.get("attempt", 1) > 1]
    items += [
        f"{item['ref']}: its excerpt is missing from the store or changed there; only its summary is known."
        for item in evidence
        if item.get("body_missing")
    ]
    items += _unread_records(grant, evidence)
    items += _baseline_skipped(state, evidence)
    items += _refused_records(state.get("refusals", []))
    unanswered = (
        "Not asked: a scheduled run waits for nobody, so this question went to no one"
        if state.get("schedule")
        else "A question to a person went unanswered in time"
    )
    items += [f"{unanswered}: {question}" for question in state.get("unanswered", ())]
    items += [
        f"A question to a person is still open: {q['question']}"
        for q in state.get("open_questions") or ()
    ]
    if note := _STATUS_NOTES.get(state.get("status", "")):
        items.append(note)
    if stop := state.get("stopped_by"):
        why = f" ({stop['reason']})" if stop.get("reason") else ""
        items.append(
            f"The run was stopped by {stop['by']}{why} before it finished; evidence that further"
            " steps would have found is unknown."
        )
    return items


def _may_have_run(item: Mapping[str, Any]) -> str:
    return (
        f"{item['ref']}: the call ran {item['attempt']} times; an earlier run of it may have"
        " completed before a crash (its result was not recorded)."
    )


def _unread_records(grant: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    """The grant's records no receipt read. A family receipt's glob the grant does not name (a
    grant rebuilt from the ledger names none) vouches for no member: each stays unread."""
    read = {source["record"] for item in evidence for source in item.get("sources", ())}
    named = {"families": grant.get("families") or {}}
    read.update(
        member
        for item in evidence
        if (family := item.get("family")) and family.get("glob") in (None, *named["families"])
        for member in family_members(family, named)
    )
    return [
        f"Approved {record['kind']} record {record_id} was not examined."
        for record_id, record in grant.get("records", {}).items()
        if record_id not in read
    ]


def _baseline_skipped(state: Mapping[str, Any], evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the triage baseline's plan did not read of the nightly's largest buckets, once no
    more will be read (the evidence budget spent, or the run ending): each bucket named with its
    family, signature and size, and why. Derived from the receipts by the plan itself."""
    grant = state.get("grant") or {}
    if state.get("chooser") != BASELINE or not grant:
        return []
    budget = grant["budget"]["evidence"]
    gathered = sum(1 for item in evidence if item.get("kind", "observation") == "observation")
    spent = gathered >= budget  # what the evidence budget counts: `nodes.evidence.observations`
    if not spent and not state.get("status"):
        return []
    why = (
        f"the evidence budget ({budget} items) was spent first"
        if spent
        else f"the run ended first ({state['status']})"
    )
    records = [{"id": key, "kind": record["kind"]} for key, record in grant["records"].items()]
    return [_skipped(bucket, reads, why) for bucket, reads in skipped(evidence, records)]


def _skipped(bucket: Bucket, reads: list[str], why: str) -> str:
    unread = {
        "readlines": f"the lines around its example {bucket.member}:{bucket.line}",
        "getrunhistory": f"the history of its test {bucket.tests[0] if bucket.tests else ''}",
    }
    return (
        f"{bucket.ref}: bucket {bucket.label} of {bucket.family} ({bucket.count} failure(s),"
        f" first error {bucket.signature!r}), one of the {TOP_BUCKETS} largest of the nightly,"
        f" was not read further ({' and '.join(unread[read] for read in reads)}): {why}."
    )


def _refused_records(refusals: list[Mapping[str, Any]]) -> list[str]:
    notes: dict[str, str] = {}
    for refusal in refusals:
        if refusal["code"] == RefusalCode.UNAPPROVED_RECORD:
            notes.setdefault(refusal["detail"], f"Not examined: {refusal['detail']}.")
    return list(notes.values())
