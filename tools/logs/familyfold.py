"""A family's scans folded into one result (`FamilyResult`), and a shard's result merged into the
whole family's: what `triage` reads against the history. Moved out of `triage.py`, which reads it.

A member's scan gives one test, or, for a JUnit member, one per testcase (`MemberScan.cases`):
outcomes are kept per (member, test). A test that a nightly's folder holds twice, as its own log
and as a testcase of a JUnit file beside it, is one test (`joined`): its verdict the one both
state, or, where they disagree, no verdict, said as the conflict it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from tools.logs.familyscan import Cited, MemberScan
from tools.logs.junit import is_junit

NO_ERROR = "(no error line)"

Status = Literal["pass", "fail", "none", "unread"]
Failure = tuple[str, str]
"""(member, test): one failing test of a member (a JUnit member holds several)."""


@dataclass(frozen=True)
class Bucket:
    signature: str
    failures: tuple[Failure, ...]
    """Sorted (member, test) pairs (its count is their number)."""
    firsts: tuple[Cited, ...]
    """Each failure's first error (or the line stating it), in the order of `failures`."""

    @property
    def count(self) -> int:
        return len(self.failures)

    @property
    def members(self) -> tuple[str, ...]:
        """Sorted member ids, each once."""
        return tuple(sorted({member for member, _ in self.failures}))

    @property
    def tests(self) -> tuple[str, ...]:
        """Sorted, each once."""
        return tuple(sorted({test for _, test in self.failures}))

    @property
    def example(self) -> Cited:
        """The first example: the smallest member id, then line."""
        return min(self.firsts)


@dataclass(frozen=True)
class FamilyResult:
    """What a set of members (a family, or a shard of one) says; every field in a canonical
    order, so that `merge` of shards in any grouping and order is the whole family's result."""

    outcomes: tuple[tuple[str, str, Status], ...] = ()
    """(member, test, status), sorted by member, then test."""
    buckets: tuple[Bucket, ...] = ()
    """Sorted by signature."""
    unread: tuple[tuple[str, str], ...] = ()
    """(member, why), sorted."""
    notes: tuple[tuple[str, str], ...] = ()
    """(member, note), sorted."""
    size: int = 0
    """Bytes read (decompressed)."""
    errors: tuple[tuple[str, str, Cited], ...] = ()
    """(member, test, its first error line), sorted, for the tests that did not pass: the morning
    report's row of each test (`tools/logs/morning.py`)."""

    @property
    def members(self) -> int:
        """Tests read (a JUnit member counts each of its testcases)."""
        return len(self.outcomes)


@dataclass
class _Fold:
    """Results folded one by one (keyed by member and test: a member seen twice is one)."""

    outcomes: dict[Failure, Status] = field(default_factory=dict)
    buckets: dict[str, dict[Failure, Cited]] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)
    notes: set[tuple[str, str]] = field(default_factory=set)
    size: int = 0
    errors: dict[Failure, Cited] = field(default_factory=dict)

    def add_scan(self, scan: MemberScan) -> None:
        self.size += scan.size
        if scan.unread:
            self.unread[scan.member] = scan.unread
        self.notes.update((scan.member, note) for note in scan.notes)
        if not scan.cases or scan.unread:
            self._add_test(scan)
        for case in scan.cases:
            self.notes.update((case.member, note) for note in case.notes)
            self._add_test(case)

    def _add_test(self, scan: MemberScan) -> None:
        status: Status = (
            "unread" if scan.unread else "none" if scan.verdict is None else scan.verdict
        )
        self.outcomes[(scan.member, scan.test)] = status
        if scan.first_error is not None and scan.verdict != "pass":
            self.errors[(scan.member, scan.test)] = scan.first_error
        if scan.verdict == "fail":
            first = scan.first_error or scan.stated or Cited(scan.member, 0, "")
            held = self.buckets.setdefault(scan.signature or NO_ERROR, {})
            held[(scan.member, scan.test)] = first

    def add_result(self, result: FamilyResult) -> None:
        for member, test, status in result.outcomes:
            self.outcomes[(member, test)] = status
        self.unread.update(result.unread)
        self.notes.update(result.notes)
        self.errors.update(((member, test), first) for member, test, first in result.errors)
        for bucket in result.buckets:
            held = self.buckets.setdefault(bucket.signature, {})
            held.update(zip(bucket.failures, bucket.firsts, strict=True))
        self.size += result.size

    def result(self) -> FamilyResult:
        return FamilyResult(
            outcomes=tuple(
                (member, test, status) for (member, test), status in sorted(self.outcomes.items())
            ),
            buckets=tuple(
                _bucket(signature, held) for signature, held in sorted(self.buckets.items())
            ),
            unread=tuple(sorted(self.unread.items())),
            notes=tuple(sorted(self.notes)),
            size=self.size,
            errors=tuple((m, t, first) for (m, t), first in sorted(self.errors.items())),
        )


def _bucket(signature: str, held: dict[Failure, Cited]) -> Bucket:
    failures = tuple(sorted(held))
    return Bucket(signature, failures, tuple(held[failure] for failure in failures))


def fold(scans: Iterable[MemberScan]) -> FamilyResult:
    """The result of these members' scans."""
    folded = _Fold()
    for scan in scans:
        folded.add_scan(scan)
    return folded.result()


def merge(results: Iterable[FamilyResult]) -> FamilyResult:
    """Shards' results as one: associative and order-independent; disjoint shards give exactly
    the whole family's result (a member in two shards counts once, but its bytes twice)."""
    folded = _Fold()
    for result in results:
        folded.add_result(result)
    return folded.result()


def joined(result: FamilyResult) -> FamilyResult:
    """A test held twice in one folder, as its own log and as a JUnit testcase, as one test:
    the log's row kept with the verdict they agree on (or the one that states a verdict), the
    testcase's dropped; where one says pass and the other fail, no verdict, and a note says so.
    Applied to a whole family's result (after `merge`), never to a shard's."""
    cases = {
        (_folder(member), test): (member, test, status)
        for member, test, status in result.outcomes
        if is_junit(member)
    }
    dropped: set[Failure] = set()
    outcomes: dict[Failure, Status] = {}
    notes = set(result.notes)
    for member, test, status in result.outcomes:
        twin = None if is_junit(member) else cases.get((_folder(member), test))
        if twin is None:
            outcomes.setdefault((member, test), status)
            continue
        said = _agreed(status, twin[2])
        if said is None:
            said = "none"
            notes.add((member, f"its log says {status}, {twin[0]} says {twin[2]}: in conflict"))
        kept, other = (
            (twin, (member, test))
            if status != said == twin[2]
            else ((member, test, status), twin[:2])
        )
        outcomes[kept[:2]] = said
        dropped.add(other)
        outcomes.pop(other, None)
    return FamilyResult(
        outcomes=tuple(
            (m, t, s) for (m, t), s in sorted(outcomes.items()) if (m, t) not in dropped
        ),
        buckets=_without(result, dropped, outcomes),
        unread=result.unread,
        notes=tuple(sorted(notes)),
        size=result.size,
        errors=tuple(error for error in result.errors if error[:2] not in dropped),
    )


def _agreed(log: Status, case: Status) -> Status | None:
    """The verdict of a test whose log says `log` and whose testcase says `case`; None when
    they conflict (one pass, one fail)."""
    if log == case or case not in ("pass", "fail"):
        return log
    if log not in ("pass", "fail"):
        return case
    return None


def _without(
    result: FamilyResult, dropped: set[Failure], outcomes: dict[Failure, Status]
) -> tuple[Bucket, ...]:
    """The buckets without the failures dropped or no longer failing."""
    kept = []
    for bucket in result.buckets:
        held = {
            failure: first
            for failure, first in zip(bucket.failures, bucket.firsts, strict=True)
            if failure not in dropped and outcomes.get(failure) == "fail"
        }
        if held:
            kept.append(_bucket(bucket.signature, held))
    return tuple(kept)


def _folder(member: str) -> str:
    return PurePosixPath(member).parent.as_posix()
