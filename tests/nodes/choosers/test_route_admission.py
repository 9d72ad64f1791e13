"""Evaluation decides the route: a model route with no passing evaluation report of its own
identity (endpoint, model, settings, locality) for the scenario's profile is refused at admission,
in one line with its latest report's figures; a passing report admits it, and a person's override
runs it anyway — both recorded in the run's `admitted` event. The route is a real local
OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from guards.route_admission import RouteReport, identity_digest
from nodes.choosers.admissions import write_route_report
from nodes.choosers.route import route_from_env
from tests.cli_process import warrant
from tests.fake_openai import MODEL, FakeOpenAI
from tests.helpers import stop
from tests.nodes.choosers.test_model import GOOD_R42

ROOT = Path(__file__).resolve().parents[3]
STOP_EARLY = json.dumps(stop("nothing read"))


def report(
    route: FakeOpenAI, passed: int, cases: int = 4, model: str = MODEL, profile: str = "triage"
) -> RouteReport:
    """A report of `cases` cases, `passed` of them passing in all 3 runs, earned on the route
    the `route` fixture sets (or on `model` at the same endpoint)."""
    identity = route_from_env({**os.environ, "WARRANT_MODEL": model}).identity()
    assert identity["base_url"] == route.url
    results = [
        {"case": f"case-{n}", "runs": ["pass"] * 3 if n < passed else ["pass", "fail", "pass"]}
        for n in range(cases)
    ]
    return RouteReport(
        profile,
        model,
        "model",
        "evals/warrant.toml",
        "ab" * 32,
        3,
        cases,
        passed,
        "2026-12-06",
        passed == cases,
        identity,
        identity_digest(identity),
        results,
    )


@pytest.fixture
def route(monkeypatch, tmp_path) -> FakeOpenAI:
    server = FakeOpenAI(GOOD_R42)
    monkeypatch.delenv("WARRANT_ROUTE_OVERRIDE", raising=False)
    monkeypatch.setenv("WARRANT_MODEL", MODEL)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("WARRANT_ADMISSIONS", str(tmp_path / "admissions"))
    return server


def model_run(tmp_path: Path) -> tuple[int, str, list[dict]]:
    tmp_path.mkdir(exist_ok=True)
    db = str(tmp_path / "w.sqlite")
    ran = warrant("run", "R42", "--chooser", "model", "--thread", "m", "--db", db, "-q", cwd=ROOT)
    if ran.returncode != 0:
        return ran.returncode, ran.stderr, []
    events = json.loads(warrant("events", "m", "--db", db, "--json", cwd=ROOT).stdout)
    return ran.returncode, ran.stderr, events


def test_a_route_without_a_report_is_refused_before_the_run(route, tmp_path):
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2 and stderr.count("\n") == 1
    assert stderr.startswith(
        f"error: model route {MODEL!r} has no evaluation report for profile triage"
    )
    assert route.requests == []  # nothing was sent to the route


def test_a_failing_report_is_quoted_and_refused(route, tmp_path):
    write_route_report(tmp_path / "admissions", report(route, passed=1))
    write_route_report(tmp_path / "admissions", report(route, passed=4, profile="sta"))
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2
    assert (
        "is not admitted for profile triage: its latest report, evals/warrant.toml"
        " (sha256 abababababab…), chooser model, 2026-12-06: 1/4 cases passed in all 3 run(s),"
        " did not pass" in stderr
    )


def test_a_passing_report_admits_the_route_and_is_recorded(route, tmp_path):
    passing = report(route, passed=4)
    write_route_report(tmp_path / "admissions", passing)
    with route.running():
        code, stderr, events = model_run(tmp_path)
    assert code == 0, stderr
    admitted = events[0]["payload"]["route_admission"]
    assert admitted == {"admitted_by": passing.figures, "route_sha256": passing.route_sha256}


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("WARRANT_MODEL_LOCALITY", "remote"),  # the same model, sent as to a remote endpoint
        ("WARRANT_MODEL_TEMPERATURE", "0.7"),
        ("WARRANT_MODEL_OUTPUT_TOKENS", "4096"),
        ("WARRANT_MODEL_DIALECT", "json_schema"),
    ],
)
def test_a_report_earned_on_a_local_endpoint_admits_no_other_route_of_the_model(
    route, tmp_path, monkeypatch, setting, value
):
    earned = report(route, passed=4)
    assert earned.route["locality"] == "local"
    write_route_report(tmp_path / "admissions", earned)
    monkeypatch.setenv(setting, value)
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2 and stderr.count("\n") == 1, stderr
    assert "has no evaluation report for profile triage on this route" in stderr
    assert "1 report(s) of this model for another endpoint or settings" in stderr
    assert route.requests == []


def test_a_report_whose_figures_disagree_with_its_cases_is_refused(route, tmp_path):
    earned = report(route, passed=0, cases=16)
    forged = json.loads(write_route_report(tmp_path / "admissions", earned).read_text())
    assert (forged["passed"], forged["cases"], forged["admitted"]) == (0, 16, False)
    folder = tmp_path / "admissions" / "triage"
    (folder / "forged.json").write_text(json.dumps({**forged, "admitted": True}))
    (folder / f"{MODEL}-{earned.route_sha256[:12]}.json").unlink()
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2 and stderr.count("\n") == 1, stderr
    assert "0/16 cases passed in all 3 run(s), is refused: it says admitted: true" in stderr
    assert route.requests == []


def test_an_override_runs_an_unadmitted_route_and_is_recorded(route, tmp_path, monkeypatch):
    monkeypatch.setenv("WARRANT_ROUTE_OVERRIDE", "alice: trying the new route")
    with route.running():
        code, stderr, events = model_run(tmp_path)
    assert code == 0, stderr
    recorded = events[0]["payload"]["route_admission"]
    assert recorded["override"] == "alice: trying the new route"
    assert recorded["refused"].startswith(f"model route {MODEL!r} has no evaluation report")


def test_a_report_for_another_model_admits_nothing(route, tmp_path):
    write_route_report(tmp_path / "admissions", report(route, passed=4, model="another-model"))
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2 and "has no evaluation report for profile triage" in stderr
    assert "report(s) of this model" not in stderr


SUITE = """\
version = 1
[[case]]
id = "r42"
scenario = "R42"
choosers = ["model"]
[case.expect]
status = "stopped"
consumed = [{ tool = "searchlogs", record = "lab/runs/R42/reset_smoke.log", line = 22 }]
never_read = ["lab/protected/design.txt"]
"""


@pytest.mark.parametrize(("replies", "passes"), [(GOOD_R42, True), ([STOP_EARLY] * 4, False)])
def test_a_route_is_admitted_after_its_evaluation_passes_and_only_then(
    route, tmp_path, replies, passes
):
    """One endpoint throughout: refused, evaluated, then admitted or refused with the figures."""
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    admissions = tmp_path / "admissions"
    with route.running():
        refused, stderr, _ = model_run(tmp_path)
        assert refused == 2 and "has no evaluation report" in stderr
        route.script = [{"content": reply} for reply in replies]
        ran = warrant(
            "eval",
            str(suite),
            "--chooser",
            "model",
            "--admit",
            "--admit-to",
            str(admissions),
            cwd=ROOT,
        )
        assert ran.returncode == (0 if passes else 1), ran.stdout + ran.stderr
        route.script, route.requests[:] = [{"content": reply} for reply in GOOD_R42], []
        code, stderr, events = model_run(tmp_path / "after")
    [written] = (admissions / "triage").glob("*.json")
    kept = json.loads(written.read_text())
    assert (kept["model"], kept["cases"], kept["passed"], kept["admitted"]) == (
        MODEL,
        1,
        1 if passes else 0,
        passes,
    )
    assert kept["suite_sha256"] == hashlib.sha256(suite.read_bytes()).hexdigest()
    assert kept["route"] == route_from_env().identity() and kept["route"]["base_url"] == route.url
    assert kept["route_sha256"] == identity_digest(kept["route"])
    assert kept["results"] == [{"case": "r42", "runs": ["pass" if passes else "fail"]}]
    if passes:
        assert code == 0, stderr
        assert events[0]["payload"]["route_admission"]["admitted_by"].startswith(str(suite))
    else:
        assert code == 2 and "0/1 cases passed in all 1 run(s), did not pass" in stderr
