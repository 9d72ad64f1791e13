"""Evaluation decides the route: a model route with no passing evaluation report for the
scenario's profile is refused at admission, in one line with its latest report's figures; a
passing report admits it, and a person's override runs it anyway — both recorded in the run's
`admitted` event. The route is a real local OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from guards.route_admission import RouteReport
from nodes.choosers.admissions import write_route_report
from tests.cli_process import warrant
from tests.fake_openai import MODEL, FakeOpenAI
from tests.helpers import stop
from tests.nodes.choosers.test_model import GOOD_R42

ROOT = Path(__file__).resolve().parents[3]
STOP_EARLY = json.dumps(stop("nothing read"))


def report(passed: int, cases: int = 4, model: str = MODEL, profile: str = "triage") -> RouteReport:
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
    write_route_report(tmp_path / "admissions", report(passed=1))
    write_route_report(tmp_path / "admissions", report(passed=4, profile="sta"))  # another profile
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2
    assert (
        "is not admitted for profile triage: its latest report, evals/warrant.toml"
        " (sha256 abababababab…), chooser model, 2026-12-06: 1/4 cases passed in all 3 run(s),"
        " did not pass" in stderr
    )


def test_a_passing_report_admits_the_route_and_is_recorded(route, tmp_path):
    write_route_report(tmp_path / "admissions", report(passed=4))
    with route.running():
        code, stderr, events = model_run(tmp_path)
    assert code == 0, stderr
    admitted = events[0]["payload"]["route_admission"]
    assert admitted == {"admitted_by": report(passed=4).figures}


def test_an_override_runs_an_unadmitted_route_and_is_recorded(route, tmp_path, monkeypatch):
    monkeypatch.setenv("WARRANT_ROUTE_OVERRIDE", "alice: trying the new route")
    with route.running():
        code, stderr, events = model_run(tmp_path)
    assert code == 0, stderr
    recorded = events[0]["payload"]["route_admission"]
    assert recorded["override"] == "alice: trying the new route"
    assert recorded["refused"].startswith(f"model route {MODEL!r} has no evaluation report")


def test_a_report_for_another_model_admits_nothing(route, tmp_path):
    write_route_report(tmp_path / "admissions", report(passed=4, model="another-model"))
    with route.running():
        code, stderr, _ = model_run(tmp_path)
    assert code == 2 and "has no evaluation report for profile triage" in stderr


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
    route, tmp_path, monkeypatch, replies, passes
):
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    admissions = tmp_path / "admissions"
    with route.running():
        refused, stderr, _ = model_run(tmp_path)
    assert refused == 2 and "has no evaluation report" in stderr
    evaluated = FakeOpenAI(replies)
    monkeypatch.setenv("OPENAI_BASE_URL", evaluated.url)
    with evaluated.running():
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
    [written] = (admissions / "triage").glob("*.json")
    kept = json.loads(written.read_text())
    assert (kept["model"], kept["cases"], kept["passed"], kept["admitted"]) == (
        MODEL,
        1,
        1 if passes else 0,
        passes,
    )
    assert kept["suite_sha256"] == hashlib.sha256(suite.read_bytes()).hexdigest()
    again = FakeOpenAI(GOOD_R42)
    monkeypatch.setenv("OPENAI_BASE_URL", again.url)
    with again.running():
        code, stderr, events = model_run(tmp_path / "after")
    if passes:
        assert code == 0, stderr
        assert events[0]["payload"]["route_admission"]["admitted_by"].startswith(str(suite))
    else:
        assert code == 2 and "0/1 cases passed in all 1 run(s), did not pass" in stderr
