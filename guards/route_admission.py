"""Evaluation decides the route (seed 000: "model replacement an evaluation decision rather than a
permission redesign"): a model route is admitted for a profile only by an evaluation report of
its own that passed — every case of that profile passed in all k runs.

A report is bound to the route it measured: its identity (endpoint base URL, model, the settings
that change what the model answers, its locality) and that identity's sha256 (`identity_digest`).
Only reports of the route's own identity and profile decide, and of them the newest: a newer
failing report refuses even when an older one passed. A report is verified, not trusted: its
figures are recomputed from its own per-case results, and one whose stated figures, `admitted`
flag or digest disagree with them is refused, naming why. Pure: the reports are given.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

VERDICTS = frozenset({"pass", "fail", "unknown"})


def identity_digest(identity: Mapping[str, Any]) -> str:
    """The sha256 of a route's identity as canonical JSON (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(
        dict(identity), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RouteReport:
    """One evaluation of a model route on one profile's cases of a suite (`warrant eval --admit`).
    Read from JSON as it is: `report_problem` says whether it holds together."""

    profile: str
    model: str
    chooser: str
    suite: str
    suite_sha256: str
    k: int
    """The fewest runs any case had (pass^k)."""
    cases: int
    passed: int
    """Cases passed in all their runs (pass^k)."""
    date: str
    """When it was written (ISO 8601; a date alone is its day's start, UTC)."""
    admitted: bool
    """Every case passed in all its runs."""
    route: Mapping[str, Any]
    """The route's identity (`nodes.choosers.route.Route.identity`)."""
    route_sha256: str
    """`identity_digest(route)`."""
    results: Sequence[Mapping[str, Any]]
    """Each case's verdicts, one per run: `{"case": id, "runs": ["pass", "fail", …]}`."""
    note: str | None = None
    """How the report came to be, when not as `--admit` wrote it (a conversion)."""

    @property
    def figures(self) -> str:
        return (
            f"{self.suite} (sha256 {str(self.suite_sha256)[:12]}…), chooser {self.chooser},"
            f" {self.date}: {self.passed}/{self.cases} cases passed in all {self.k} run(s)"
        )

    @property
    def moment(self) -> datetime:
        """When it was written; an unreadable date is the newest of all (it then decides, and
        is refused: `report_problem`)."""
        try:
            at = datetime.fromisoformat(str(self.date))
        except ValueError:
            return datetime.max.replace(tzinfo=UTC)
        return at if at.tzinfo else at.replace(tzinfo=UTC)

    def digest(self) -> str | None:
        """The digest of the identity it names, or None when that is no JSON object."""
        try:
            return identity_digest(self.route) if isinstance(self.route, Mapping) else None
        except (TypeError, ValueError):
            return None


def admitted(passed: int, cases: int) -> bool:
    return cases > 0 and passed == cases


def measured(results: object) -> tuple[int, int, int] | str:
    """(cases, passed in all runs, fewest runs) from per-case results, or why they are none."""
    if not isinstance(results, Sequence) or isinstance(results, str) or not results:
        return "it holds no per-case results"
    seen: set[str] = set()
    passed, runs_of = 0, []
    for result in results:
        case = result.get("case") if isinstance(result, Mapping) else None
        runs = result.get("runs") if isinstance(result, Mapping) else None
        if not isinstance(case, str) or not isinstance(runs, list) or not runs:
            return "a case result is not {case, runs: [verdict, …]}"
        if case in seen:
            return f"it holds case {case[:80]} twice"
        if not all(isinstance(verdict, str) and verdict in VERDICTS for verdict in runs):
            return f"case {case[:80]} has a verdict that is not pass, fail or unknown"
        seen.add(case)
        passed += all(verdict == "pass" for verdict in runs)
        runs_of.append(len(runs))
    return len(results), passed, min(runs_of)


def report_problem(report: RouteReport) -> str | None:
    """Why the report cannot be taken as written, in one short clause, or None."""
    if report.digest() is None or report.digest() != report.route_sha256:
        return "its route's sha256 is not its route_sha256"
    if report.route.get("model") != report.model:
        return "its model is not its route's"
    if report.moment == datetime.max.replace(tzinfo=UTC):
        return f"its date {str(report.date)[:40]!r} is not ISO 8601"
    found = measured(report.results)
    if isinstance(found, str):
        return found
    cases, passed, k = found
    stated = (report.cases, report.passed, report.k)
    if [type(value) for value in stated] != [int] * 3 or stated != (cases, passed, k):
        return (
            f"it states {report.passed}/{report.cases} in all {report.k} run(s);"
            f" its cases show {passed}/{cases} passed in all {k} run(s)"
        )
    if report.admitted is not admitted(passed, cases):
        return f"it says admitted: {json.dumps(report.admitted)} for {passed}/{cases} passed"
    return None


def route_refusal(
    profile: str, identity: Mapping[str, Any], reports: Iterable[RouteReport]
) -> str | None:
    """Why the route of `identity` may not choose for `profile`, in one line with its latest
    report's figures; None when its newest reports (those of the latest moment) all passed."""
    model, digest = identity.get("model"), identity_digest(identity)
    given = [report for report in reports if report.profile == profile]
    own = [report for report in given if digest in (report.route_sha256, report.digest())]
    how = (
        "`warrant eval SUITE --chooser model --admit` admits it when the suite passes;"
        " $WARRANT_ROUTE_OVERRIDE=REASON runs it anyway, recorded"
    )
    if not own:
        others = sum(report.model == model for report in given)
        elsewhere = (
            f" ({others} report(s) of this model for another endpoint or settings)"
            if others
            else ""
        )
        return (
            f"model route {model!r} has no evaluation report for profile {profile} on this route"
            f" ({identity.get('locality')} {identity.get('base_url') or 'default endpoint'},"
            f" route sha256 {digest[:12]}…){elsewhere}: {how}"
        )
    newest = max(report.moment for report in own)
    latest = [report for report in own if report.moment == newest]
    for report in latest:
        if why := report_problem(report):
            return (
                f"model route {model!r} is not admitted for profile {profile}: its latest report,"
                f" {report.figures}, is refused: {why}; {how}"
            )
    for report in latest:
        if not report.admitted:
            return (
                f"model route {model!r} is not admitted for profile {profile}: its latest report,"
                f" {report.figures}, did not pass; {how}"
            )
    return None


def admitting(
    profile: str, identity: Mapping[str, Any], reports: Iterable[RouteReport]
) -> RouteReport | None:
    """The report that admits the route (its newest, passing), or None."""
    given = list(reports)
    if route_refusal(profile, identity, given) is not None:
        return None
    digest = identity_digest(identity)
    own = [r for r in given if r.profile == profile and r.route_sha256 == digest]
    return max(own, key=lambda report: report.moment)
