"""A route is admitted for a profile by the newest report of its own identity (endpoint, model,
settings, locality) that passed, verified from its own per-case results, and by nothing else."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from guards.route_admission import (
    RouteReport,
    admitted,
    identity_digest,
    report_problem,
    route_refusal,
)

LOCAL = {
    "version": 2,
    "model": "m",
    "base_url": "http://127.0.0.1:8080/v1",
    "locality": "local",
    "temperature": 0.0,
    "max_output_tokens": 512,
    "token_param": "max_tokens",
    "context_tokens": 8192,
    "reasoning_effort": None,
    "dialect": "json_object+schema",
}
REMOTE = {**LOCAL, "base_url": "https://models.example.com/v1", "locality": "remote"}


def results(verdicts: list[list[str]]) -> list[dict[str, Any]]:
    return [{"case": f"c{n}", "runs": runs} for n, runs in enumerate(verdicts)]


def report(
    verdicts: list[list[str]],
    route: dict[str, Any] = LOCAL,
    date: str = "2026-12-06T10:00:00+00:00",
    profile: str = "triage",
    **stated: Any,
) -> RouteReport:
    """A report whose figures are its cases' own unless `stated` overrides them."""
    k = min((len(runs) for runs in verdicts), default=0)
    passed = sum(all(v == "pass" for v in runs) for runs in verdicts)
    fields: dict[str, Any] = {
        "profile": profile,
        "model": route["model"],
        "chooser": "model",
        "suite": "s.toml",
        "suite_sha256": "0" * 64,
        "k": k,
        "cases": len(verdicts),
        "passed": passed,
        "date": date,
        "admitted": admitted(passed, len(verdicts)),
        "route": route,
        "route_sha256": identity_digest(route),
        "results": results(verdicts),
    }
    return RouteReport(**(fields | stated))


PASSING = [["pass", "pass"]] * 3
FAILING = [["pass", "pass"], ["pass", "fail"], ["pass", "pass"]]


def test_a_passing_report_admits_its_own_route():
    assert report_problem(report(PASSING)) is None
    assert route_refusal("triage", LOCAL, [report(PASSING)]) is None


def test_a_report_earned_on_a_local_endpoint_admits_neither_a_remote_one_nor_other_settings():
    earned = [report(PASSING)]
    for other in (
        REMOTE,
        {**LOCAL, "base_url": "http://127.0.0.1:9090/v1"},
        {**LOCAL, "temperature": 0.7},
        {**LOCAL, "max_output_tokens": 4096},
        {**LOCAL, "dialect": "json_object"},
        {**LOCAL, "locality": "remote"},
    ):
        refusal = route_refusal("triage", other, earned)
        assert refusal is not None and "has no evaluation report for profile triage" in refusal
        assert "1 report(s) of this model for another endpoint or settings" in refusal
        assert "\n" not in refusal


def test_a_report_saying_admitted_with_none_passed_is_refused():
    forged = report([["fail"]] * 16, admitted=True)
    assert (forged.passed, forged.cases, forged.admitted) == (0, 16, True)
    why = report_problem(forged)
    assert why is not None and "admitted" in why
    refusal = route_refusal("triage", LOCAL, [forged])
    assert refusal is not None and "0/16 cases passed in all 1 run(s)" in refusal
    assert "is refused: " in refusal and "\n" not in refusal


def test_a_newer_failing_report_beats_an_older_passing_one():
    older = report(PASSING, date="2026-12-01T09:00:00+00:00")
    newer = report(FAILING, date="2026-12-06T09:00:00+00:00")
    for order in ([older, newer], [newer, older]):
        refusal = route_refusal("triage", LOCAL, order)
        assert refusal is not None and "2/3 cases passed in all 2 run(s), did not pass" in refusal
    assert route_refusal("triage", LOCAL, [report(FAILING, date="2026-12-01"), older]) is None


def test_reports_of_the_same_moment_admit_only_if_all_passed():
    at = "2026-12-06T09:00:00+00:00"
    assert route_refusal("triage", LOCAL, [report(PASSING, date=at), report(FAILING, date=at)])


def test_figures_disagreeing_with_the_cases_are_refused_naming_why():
    for stated, said in (
        ({"passed": 3, "admitted": True}, "its cases show 2/3 passed in all 2 run(s)"),
        ({"cases": 4}, "its cases show 2/3 passed in all 2 run(s)"),
        ({"k": 3}, "its cases show 2/3 passed in all 2 run(s)"),
        ({"route_sha256": "f" * 64}, "its route's sha256 is not its route_sha256"),
        ({"results": results([["pass"], ["pass"], ["pass"]]) * 2}, "case c0 twice"),
        ({"results": results([["pass", "maybe"]])}, "a verdict that is not pass, fail or unknown"),
        ({"date": "yesterday"}, "date"),
    ):
        forged = report(FAILING, **stated)
        why = report_problem(forged)
        assert why is not None and said in why, (stated, why)
        refusal = route_refusal("triage", LOCAL, [forged])
        assert refusal is not None and f"is refused: {why}" in refusal and "\n" not in refusal


def test_a_report_of_the_identity_that_does_not_say_it_is_refused():
    """A report that names this identity's digest but another route decides nothing for it."""
    posing = report(PASSING, route=REMOTE, route_sha256=identity_digest(LOCAL))
    refusal = route_refusal("triage", LOCAL, [posing])
    assert refusal is not None and "its route's sha256 is not its route_sha256" in refusal


def test_the_identity_digest_is_of_canonical_json():
    assert identity_digest(LOCAL) == identity_digest(dict(reversed(list(LOCAL.items()))))
    assert identity_digest(LOCAL) != identity_digest({**LOCAL, "temperature": 0.1})


VERDICTS = st.lists(
    st.lists(st.sampled_from(["pass", "fail"]), min_size=1, max_size=3), min_size=1, max_size=4
)
REPORTS = st.builds(
    lambda route, verdicts, date, profile: report(verdicts, route, date, profile),
    st.sampled_from([LOCAL, REMOTE]),
    VERDICTS,
    st.sampled_from(["2026-12-01", "2026-12-06T08:00:00+00:00", "2026-12-06T09:00:00Z"]),
    st.sampled_from(["triage", "sta"]),
)


@given(st.lists(REPORTS, max_size=6))
def test_only_the_newest_reports_of_the_same_identity_and_profile_decide(reports):
    refusal = route_refusal("triage", LOCAL, reports)
    own = [r for r in reports if r.profile == "triage" and r.route == LOCAL]
    newest = max((r.moment for r in own), default=None)
    decide = [r for r in own if r.moment == newest]
    assert (refusal is None) == (bool(decide) and all(r.passed == r.cases for r in decide))


def test_no_cases_is_no_pass():
    assert not admitted(0, 0)
    assert report_problem(report([])) is not None
