"""triage: one call over a record family — every member's verdict, its failures bucketed by
signature, and, with a run history, each bucket new or known and each flaky test named.

For every member (`tools/logs/familyscan.py` reads it, and holds the rules): the verdict as the log
states it (a member with none is counted and named as *no verdict*, never guessed), the first
error or fatal line, and that line's signature (numbers, hex, times, seeds, paths and the test's
own name masked). Failing members are bucketed by signature, each bucket with its count, its tests
and its first example (the smallest member id, then line); a failing member with no error line is
bucketed as `(no error line)` with the line that states its failure.

With a history (`read_history`: the `getrunhistory` format, read by its own parsing): a bucket is
**known** when a history row's `signature` cell, normalized as a signature is
(`familyscan.cell_signature`), is contained in the bucket's signature, either as written or with
the row's own test name masked when the row is a failure of one of the bucket's tests; the first
such row (file order) names the run and date it was first seen. Otherwise it is **new**, and an
earlier failure of one of its tests under another signature is named beside it. Rows of the run
being triaged (`run=`) are left out. A test of the family is **flaky** when its statuses over its
last `FLAKY_RUNS` history rows, with today's verdict after them, change between pass and fail at
least twice.

Members are scanned in parallel by `tools/logs/familypool.py`, each read only as the version
admitted; a call past its time limit is cut as a whole, with the session's code (`run_family`).

The excerpt is bounded: the `MAX_BUCKETS` largest buckets (count, then signature), each cited by
its first example as `member:line`; further buckets, and names past `MAX_NAMED`, are counted and
said.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from scenario import reading
from scenario.registry import Record
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.logs.familyfold import NO_ERROR as NO_ERROR
from tools.logs.familyfold import Bucket, FamilyResult, Status, joined
from tools.logs.familyfold import merge as merge
from tools.logs.familypool import Progress, iter_members, scan_family, scan_members
from tools.logs.familyscan import Member, cell_signature
from tools.logs.runhistory import HistoryRow, history_of

MAX_BUCKETS = 10
"""Buckets shown (the largest); the rest are counted."""
MAX_NAMED = 20
"""Members or tests named in one list of the summary; the rest are counted."""
FLAKY_RUNS = 6
"""History rows of a test read for flakiness (its last ones, in file order)."""


# The report.


@dataclass(frozen=True)
class BucketReport:
    label: str
    """`B1`, `B2`, … by rank: what a statement cites."""
    bucket: Bucket
    status: Literal["new", "known"] | None
    """None without a history."""
    first_seen: HistoryRow | None = None
    """Known: the first history row with its signature."""
    failed_before: HistoryRow | None = None
    """New: the first earlier failure of one of its tests, under another signature."""


@dataclass(frozen=True)
class Flaky:
    test: str
    statuses: str
    """Oldest first, `P`/`F`, today's verdict last."""


@dataclass(frozen=True)
class Triage:
    result: FamilyResult
    buckets: tuple[BucketReport, ...]
    """The `MAX_BUCKETS` largest."""
    more_buckets: int
    more_failures: int
    """Failing members in the buckets not shown."""
    flaky: tuple[Flaky, ...]
    history: bool
    unknowns: tuple[str, ...]
    """What the triage could not tell: no-verdict members, members not read, buckets not shown."""

    def count(self, status: Status) -> int:
        return sum(1 for _, _, said in self.result.outcomes if said == status)

    def named(self, status: Status) -> list[str]:
        return [member for member, _, said in self.result.outcomes if said == status]


def triage(
    family: Sequence[Member],
    history: Sequence[HistoryRow] | None = None,
    *,
    run: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> Triage:
    """The family triaged: `scan_family` then `report`."""
    return report(scan_family(family, workers, progress=progress), history, run=run)


def report(
    result: FamilyResult, history: Sequence[HistoryRow] | None = None, *, run: str | None = None
) -> Triage:
    """A (merged) family result, its tests held twice joined (`familyfold.joined`), read
    against the history (rows of `run` left out)."""
    result = joined(result)
    rows = [row for row in history or () if run is None or row.run != run]
    ranked = sorted(result.buckets, key=lambda bucket: (-bucket.count, bucket.signature))
    shown = ranked[:MAX_BUCKETS]
    reports = tuple(
        bucket_report(f"B{rank}", bucket, rows if history is not None else None)
        for rank, bucket in enumerate(shown, 1)
    )
    more = ranked[MAX_BUCKETS:]
    flaky = _flaky(result, rows) if history is not None else ()
    more_failures = sum(bucket.count for bucket in more)
    return Triage(
        result=result,
        buckets=reports,
        more_buckets=len(more),
        more_failures=more_failures,
        flaky=flaky,
        history=history is not None,
        unknowns=_unknowns(result, len(more), more_failures),
    )


def known_rows(bucket: Bucket, rows: Sequence[HistoryRow]) -> list[HistoryRow]:
    """The history rows whose signature the bucket's contains (module docstring), file order."""
    tests = set(bucket.tests)
    found = []
    for row in rows:
        if not row.signature.strip():
            continue
        as_written = cell_signature(row.signature)
        if as_written and as_written in bucket.signature:
            found.append(row)
            continue
        if row.test in tests and row.verdict == "fail":
            own = cell_signature(row.signature, row.test)
            if own and own in bucket.signature:
                found.append(row)
    return found


def bucket_report(label: str, bucket: Bucket, rows: list[HistoryRow] | None) -> BucketReport:
    if rows is None:
        return BucketReport(label, bucket, None)
    known = known_rows(bucket, rows)
    if known:
        return BucketReport(label, bucket, "known", first_seen=known[0])
    tests = set(bucket.tests)
    before = next((row for row in rows if row.test in tests and row.verdict == "fail"), None)
    return BucketReport(label, bucket, "new", failed_before=before)


def _flaky(result: FamilyResult, rows: Sequence[HistoryRow]) -> tuple[Flaky, ...]:
    statuses = recent_statuses(result, rows)
    return tuple(Flaky(test, said) for test, said in sorted(statuses.items()) if flips(said))


def flips(statuses: str) -> bool:
    """Flaky: the statuses change between pass and fail at least twice."""
    return sum(a != b for a, b in pairwise(statuses)) >= 2


def recent_statuses(result: FamilyResult, rows: Sequence[HistoryRow]) -> dict[str, str]:
    """Each test with a verdict today: its last `FLAKY_RUNS` history statuses, oldest first,
    then today's (`F` when any of its members failed), as `P`/`F`."""
    today: dict[str, str] = {}
    for _, test, status in result.outcomes:
        if status in ("pass", "fail"):
            today[test] = "F" if status == "fail" or today.get(test) == "F" else "P"
    past: dict[str, list[str]] = {}
    for row in rows:
        if row.test in today and row.verdict is not None:
            past.setdefault(row.test, []).append("F" if row.verdict == "fail" else "P")
    return {test: "".join(past.get(test, [])[-FLAKY_RUNS:]) + today[test] for test in today}


def _unknowns(result: FamilyResult, more_buckets: int, more_failures: int) -> tuple[str, ...]:
    unknowns = []
    if none := [member for member, _, status in result.outcomes if status == "none"]:
        unknowns.append(
            f"the verdict of {len(none)} member(s) whose log states none: {_names(none)}"
        )
    for member, why in result.unread[:MAX_NAMED]:
        unknowns.append(f"what {member} says: it {why.removeprefix(member).strip()}")
    if len(result.unread) > MAX_NAMED:
        unknowns.append(f"what {len(result.unread) - MAX_NAMED} more unread member(s) say")
    if more_buckets:
        unknowns.append(
            f"the signatures of {more_failures} failing member(s) in"
            f" {more_buckets} smaller bucket(s) not shown"
        )
    return tuple(unknowns)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def summarize(triaged: Triage) -> str:
    result = triaged.result
    failed = triaged.count("fail")
    parts = [
        f"{result.members} member(s): {triaged.count('pass')} pass, {failed} fail,"
        f" {triaged.count('none')} with no verdict, {triaged.count('unread')} not read"
    ]
    if result.buckets:
        parts.append(
            f"{failed} failure(s) in {len(result.buckets)} signature bucket(s)"
            + (
                f"; the {len(triaged.buckets)} largest shown, {triaged.more_buckets} more"
                f" ({triaged.more_failures} failure(s)) counted, not shown"
                if triaged.more_buckets
                else ""
            )
        )
    for shown in triaged.buckets:
        bucket = shown.bucket
        where = f"{bucket.example.member}:{bucket.example.number}"
        tests = _names(list(bucket.tests))
        part = f"{shown.label} ×{bucket.count} [{tests}] {bucket.signature!r}, first at {where}"
        if shown.status == "known" and (seen := shown.first_seen):
            part += f"; known: first seen in run {seen.run} ({seen.date}, history line {seen.line})"
        elif shown.status == "new":
            part += "; new"
            if before := shown.failed_before:
                part += (
                    f" (its test {before.test} failed before with another signature: run"
                    f" {before.run} {before.date}, history line {before.line})"
                )
        parts.append(part)
    if triaged.history:
        parts.append(
            "flaky: "
            + ", ".join(f"{flaky.test} ({flaky.statuses})" for flaky in triaged.flaky[:MAX_NAMED])
            + (
                f" and {len(triaged.flaky) - MAX_NAMED} more"
                if len(triaged.flaky) > MAX_NAMED
                else ""
            )
            if triaged.flaky
            else f"no test alternates pass and fail in its last {FLAKY_RUNS} runs"
        )
    if none := triaged.named("none"):
        parts.append(f"no verdict: {_names(none)}")
    for _, why in result.unread[:MAX_NAMED]:
        parts.append(f"not read: {why}")
    if len(result.unread) > MAX_NAMED:
        parts.append(f"{len(result.unread) - MAX_NAMED} more member(s) not read")
    notes = Counter(member for member, _ in result.notes)
    for member, note in result.notes[:MAX_NAMED]:
        parts.append(f"{member} {note}")
    if len(result.notes) > MAX_NAMED:
        parts.append(f"{len(result.notes) - MAX_NAMED} more note(s) on {len(notes)} member(s)")
    return "; ".join(parts)


def excerpt(triaged: Triage) -> Excerpt:
    """The bounded excerpt: the summary, and each shown bucket's first example as
    `B1 member:line: text` (numbered with its line in its member)."""
    lines: list[Line] = [
        make_line(
            shown.bucket.example.number,
            f"{shown.label} {shown.bucket.example.member}:{shown.bucket.example.number}:"
            f" {shown.bucket.example.text}",
        )
        for shown in triaged.buckets
    ]
    truncated = (
        bool(triaged.more_buckets)
        or triaged.count("none") > MAX_NAMED
        or len(triaged.result.unread) > MAX_NAMED
        or len(triaged.result.notes) > MAX_NAMED
        or any(len(shown.bucket.tests) > MAX_NAMED for shown in triaged.buckets)
        or len(triaged.flaky) > MAX_NAMED
    )
    return make_excerpt(summarize(triaged), lines, truncated=truncated, unknowns=triaged.unknowns)


def run_family(
    members: Sequence[Record],
    history: Record | None = None,
    run: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> Excerpt:
    """The tool's body for approved records (the catalog's wiring names the family's records):
    each member read within the session's limits and proven the version admitted; a call past
    its time limit is cut as a whole (`ReadCut`, the session's code), as a single record's is."""
    return excerpt(read_family(members, history, run, workers, progress)[0])


def read_family(
    members: Sequence[Record],
    history: Record | None = None,
    run: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
) -> tuple[Triage, list[HistoryRow] | None]:
    """`run_family`'s reading: the family triaged, and the history's rows it was read against."""
    rows = history_of(history) if history is not None else None
    result = scan_members(iter_members(members), len(members), workers, None, progress)
    reading.check_time()
    return report(result, rows, run=run), rows


def records_in(records: Mapping[str, Record], kind: str = "log") -> list[Record]:
    return [record for record in records.values() if record.kind == kind]
