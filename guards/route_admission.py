"""Evaluation decides the route (seed 000: "model replacement an evaluation decision rather than a
permission redesign"): a model route is admitted for a profile only by an evaluation report of its
own that passed — every case of that profile passed in all k runs. Pure: the reports are given.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class RouteReport:
    """One evaluation of a model route on one profile's cases of a suite (`warrant eval --admit`)."""

    profile: str
    model: str
    chooser: str
    suite: str
    suite_sha256: str
    k: int
    cases: int
    passed: int
    """Cases passed in all k runs (pass^k)."""
    date: str
    admitted: bool
    """Every case passed in all k runs."""

    @property
    def figures(self) -> str:
        return (
            f"{self.suite} (sha256 {self.suite_sha256[:12]}…), chooser {self.chooser}, {self.date}:"
            f" {self.passed}/{self.cases} cases passed in all {self.k} run(s)"
        )


def admitted(passed: int, cases: int) -> bool:
    return cases > 0 and passed == cases


def route_refusal(profile: str, model: str, reports: Iterable[RouteReport]) -> str | None:
    """Why `model` may not choose for `profile`, with its latest report's figures; None when a
    passing report admits it."""
    own = [report for report in reports if (report.profile, report.model) == (profile, model)]
    if any(report.admitted for report in own):
        return None
    how = (
        "`warrant eval SUITE --chooser model --admit` admits it when the suite passes;"
        " $WARRANT_ROUTE_OVERRIDE=REASON runs it anyway, recorded"
    )
    if not own:
        return f"model route {model!r} has no evaluation report for profile {profile}: {how}"
    latest = max(own, key=lambda report: report.date)
    return (
        f"model route {model!r} is not admitted for profile {profile}: its latest report,"
        f" {latest.figures}, did not pass; {how}"
    )
