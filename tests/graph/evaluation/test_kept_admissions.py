"""The route reports kept in `evals/admissions/` hold together (`guards.route_admission`) and say
what the evaluation they record showed: each case's verdicts as `docs/eval/suite-model/report.json`
has them, for the suite as it is."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from graph.evaluation.admission import _profiles
from graph.evaluation.suite import load_suite
from guards.route_admission import RouteReport, report_problem, route_refusal
from nodes.choosers.route import route_from_env
from tests.local_model import ROUTE

ROOT = Path(__file__).resolve().parents[3]
KEPT = sorted((ROOT / "evals" / "admissions").glob("*/*.json"))


def test_each_kept_report_is_verified_and_its_cases_are_the_evaluations():
    measured = json.loads((ROOT / "docs" / "eval" / "suite-model" / "report.json").read_text())
    verdicts = {
        row["case"]: [judged["verdict"] for judged in row["judged"]]
        for row in measured["cases"]
        if row["chooser"] == "model"
    }
    suite = ROOT / "evals" / "warrant.toml"
    profiles = _profiles(load_suite(suite))
    assert {path.parent.name for path in KEPT} == {"triage", "sta"}
    for path in KEPT:
        report = RouteReport(**json.loads(path.read_text()))
        assert report_problem(report) is None, path
        assert report.suite_sha256 == hashlib.sha256(suite.read_bytes()).hexdigest()
        own = sorted(case for case in verdicts if profiles.get(case) == report.profile)
        assert sorted(result["case"] for result in report.results) == own
        assert all(result["runs"] == verdicts[result["case"]] for result in report.results)
        assert not report.admitted


def test_the_kept_reports_are_the_local_routes_but_for_its_unrecorded_port():
    live = route_from_env({**ROUTE, "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}).identity()
    for path in KEPT:
        report = RouteReport(**json.loads(path.read_text()))
        assert {**report.route, "base_url": live["base_url"]} == live
        refusal = route_refusal(report.profile, live, [report])  # another port: another route
        assert refusal is not None and "on this route" in refusal
