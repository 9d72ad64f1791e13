"""A route is admitted for a profile by a passing report of its own, and by nothing else."""

from hypothesis import given
from hypothesis import strategies as st

from guards.route_admission import RouteReport, admitted, route_refusal

REPORTS = st.builds(
    lambda profile, model, passed, cases, date: RouteReport(
        profile,
        model,
        "model",
        "s.toml",
        "0" * 64,
        3,
        cases,
        min(passed, cases),
        date,
        admitted(min(passed, cases), cases),
    ),
    st.sampled_from(["triage", "sta"]),
    st.sampled_from(["a", "b"]),
    st.integers(0, 5),
    st.integers(0, 5),
    st.sampled_from(["2026-12-01", "2026-12-06"]),
)


@given(st.lists(REPORTS, max_size=6))
def test_only_a_passing_report_of_the_same_route_and_profile_admits(reports):
    refusal = route_refusal("triage", "a", reports)
    own_pass = any(
        (r.profile, r.model) == ("triage", "a") and r.passed == r.cases > 0 for r in reports
    )
    assert (refusal is None) == own_pass


def test_no_cases_is_no_pass():
    assert not admitted(0, 0)
