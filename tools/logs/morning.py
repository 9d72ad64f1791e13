"""The morning report's data: a triage as rows an engineer reads at a glance, one per bucket and one
per test, each cell read from the family's members or the history (never inferred).

Per test, not per bucket: a failing test is a **new failure** when no history row of it (the run
being triaged left out) is a failure, whatever its bucket's status; a test that failed before is
not, even in a `new` bucket. Its `history` is its last `FLAKY_RUNS` statuses and today's
(`recent_statuses`), `flaky` as triage decides it (`flips`). Without a history, `new` and
`history` are null, never false: nothing was read to say so.

Every bucket is reported (the excerpt shows the `MAX_BUCKETS` largest), ranked as the excerpt ranks
them, so the labels agree; the report lives in the store as the receipt's body, not in its text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tools.excerpt import Excerpt
from tools.logs.familyscan import Cited
from tools.logs.runhistory import HistoryRow
from tools.logs.triage import BucketReport, Triage, bucket_report, flips, recent_statuses

NO_VERDICT_WHY = "its log states no pass or fail verdict"
STATUS = {"fail": "fail", "none": "no_verdict", "pass": "pass"}
"""A member's status as the report names it (an unread member has no test row)."""


def with_report(
    excerpt: Excerpt, triaged: Triage, history: Sequence[HistoryRow] | None, run: str | None
) -> Excerpt:
    """The triage's excerpt carrying its morning report."""
    return excerpt.model_copy(update={"report": morning_report(triaged, history, run=run)})


def morning_report(
    triaged: Triage, history: Sequence[HistoryRow] | None = None, *, run: str | None = None
) -> dict[str, Any]:
    """The report (the schema's names: summary, buckets, tests, no_verdict, not_read)."""
    rows = None if history is None else [row for row in history if run is None or row.run != run]
    result = triaged.result
    ranked = sorted(result.buckets, key=lambda bucket: (-bucket.count, bucket.signature))
    buckets = [bucket_report(f"B{rank}", bucket, rows) for rank, bucket in enumerate(ranked, 1)]
    label = {failure: shown.label for shown in buckets for failure in shown.bucket.failures}
    failed_before = {row.test for row in rows or () if row.verdict == "fail"}
    statuses = recent_statuses(result, rows) if rows is not None else {}
    errors = {(member, test): first for member, test, first in result.errors}
    tests = [
        _test_row(
            member, test, STATUS[status], label.get((member, test)), errors.get((member, test))
        )
        | _history_cells(test, status, rows is not None, failed_before, statuses)
        for member, test, status in result.outcomes
        if status != "unread"
    ]
    new = {row["test"] for row in tests if row["new"]} if rows is not None else None
    return {
        "summary": {
            "members": result.members,
            "pass": triaged.count("pass"),
            "fail": triaged.count("fail"),
            "no_verdict": triaged.count("none"),
            "not_read": triaged.count("unread"),
            "buckets": len(buckets),
            "new_failures": None if new is None else len(new),
        },
        "buckets": [_bucket_row(shown) for shown in buckets],
        "tests": tests,
        "no_verdict": [
            {"member": member, "test": test, "why": NO_VERDICT_WHY}
            for member, test, status in result.outcomes
            if status == "none"
        ],
        "not_read": [{"member": member, "why": why} for member, why in result.unread],
    }


def _cited(cited: Cited | None) -> dict[str, Any] | None:
    if cited is None:
        return None
    return {"member": cited.member, "line": cited.number, "text": cited.text}


def _bucket_row(shown: BucketReport) -> dict[str, Any]:
    seen = shown.first_seen
    return {
        "id": shown.label,
        "count": shown.bucket.count,
        "signature": shown.bucket.signature,
        "status": shown.status,
        "first_seen": None
        if seen is None
        else {"run": seen.run, "date": seen.date, "line": seen.line},
        "example": _cited(shown.bucket.example),
    }


def _test_row(
    member: str, test: str, status: str, bucket: str | None, error: Cited | None
) -> dict[str, Any]:
    return {
        "test": test,
        "member": member,
        "status": status,
        "bucket": bucket,
        "first_error": _cited(error),
    }


def _history_cells(
    test: str, status: str, history: bool, failed_before: set[str], statuses: Mapping[str, str]
) -> dict[str, Any]:
    """`new`, `history` and `flaky` of one test's row: null without a history; `history` null
    too for a test with no verdict today in any member (it has no status to end with)."""
    if not history:
        return {"new": None, "history": None, "flaky": False}
    said = statuses.get(test)
    return {
        "new": test not in failed_before if status == "fail" else None,
        "history": said,
        "flaky": bool(said) and flips(said or ""),
    }


def merged(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """Several families' reports as one, each bucket id prefixed with its receipt's ref (`E1/B1`)
    when there are several; the summary's counts added (new failures null when no report had a
    history)."""
    if len(reports) == 1:
        return dict(reports[0][1])
    summary: dict[str, Any] = {}
    for _, report in reports:
        for name, value in report["summary"].items():
            if value is not None or name not in summary:
                summary[name] = (summary.get(name) or 0) + value if value is not None else None
    return {
        "summary": summary,
        "buckets": [
            {**bucket, "id": f"{ref}/{bucket['id']}"}
            for ref, report in reports
            for bucket in report["buckets"]
        ],
        "tests": [
            {**row, "bucket": f"{ref}/{row['bucket']}" if row["bucket"] else None}
            for ref, report in reports
            for row in report["tests"]
        ],
        "no_verdict": [row for _, report in reports for row in report["no_verdict"]],
        "not_read": [row for _, report in reports for row in report["not_read"]],
    }
