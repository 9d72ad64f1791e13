"""`warrant eval`: cases run and judged on what they delivered; failures name their owner;
unknowns stay in the denominator."""

from __future__ import annotations

import json
from pathlib import Path

from graph.evaluation.judge import FAIL, PASS, UNKNOWN, judge, verdict
from graph.evaluation.suite import Expect
from nodes.unknowns import NO_ROOT_CAUSE
from tests.cli_process import warrant

ROOT = Path(__file__).resolve().parents[3]


def test_the_lab_suite_passes_with_its_own_choosers(tmp_path):
    result = warrant("eval", str(ROOT / "lab" / "evals" / "lab.toml"), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["case"] for row in rows] == ["r42", "r42-gated", "r43", "sta1", "r42-adversary"]
    assert all(row["pass_k"] and row["unknown"] == 0 for row in rows)


def test_a_failed_expectation_names_its_owner_and_the_eval_exits_1(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[[case]]\nid = "r43-spec"\nscenario = "R43"\nrepeat = 2\n[case.expect]\n'
        'consumed = [{ tool = "readspec", record = "lab/spec/reset_controller.md" }]\n'
        '[[case]]\nid = "r42-never"\nscenario = "R42"\n[case.expect]\n'
        'never_read = ["lab/runs/R42/reset_smoke.log"]\n'
    )
    result = warrant("eval", str(suite), "--json", cwd=tmp_path)
    assert result.returncode == 1
    spec, never = json.loads(result.stdout)
    assert (spec["runs"], spec["pass"], spec["pass_k"]) == (2, 0, False)
    assert spec["failing"] == ["consumed readspec on lab/spec/reset_controller.md (chooser)"]
    assert never["failing"] == ["never read lab/runs/R42/reset_smoke.log (guard)"]


def test_choosers_side_by_side_and_k_runs_each(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text('[[case]]\nid = "r42"\nscenario = "R42"\n[case.expect]\nstatus = "stopped"\n')
    adversary = f"file:{ROOT / 'lab' / 'choosers' / 'r42_adversarial.jsonl'}"
    result = warrant(
        "eval",
        str(suite),
        "--chooser",
        "scripted",
        "--chooser",
        adversary,
        "--repeat",
        "2",
        "--json",
        cwd=tmp_path,
    )
    rows = json.loads(result.stdout)
    assert [(row["chooser"], row["runs"], row["pass"]) for row in rows] == [
        ("scripted", 2, 2),
        (adversary, 2, 0),
    ]
    assert rows[1]["failing"] == ["status (chooser)"] and result.returncode == 1


def test_a_bad_suite_is_one_line(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text('[[case]]\nid = "x"\nscenario = "R42"\n[case.expect]\nstatus = "fine"\n')
    result = warrant("eval", str(suite), cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "status" in result.stderr


def test_a_run_that_cannot_be_decided_is_unknown_not_passed():
    handover = {"status": "stopped", "statement": NO_ROOT_CAUSE, "evidence": [], "hypotheses": []}
    checks = judge(Expect(max_steps=3), handover)
    assert verdict(checks) == UNKNOWN
    assert verdict(judge(Expect(), handover)) == PASS
    claimed = {**handover, "statement": "Root cause: clk_en"}
    assert verdict(judge(Expect(), claimed)) == FAIL


def test_recorded_runs_are_judged_again_after_an_expectation_changes(tmp_path):
    db = str(tmp_path / "eval.sqlite")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[[case]]\nid = "r43"\nscenario = "R43"\nrepeat = 2\n[case.expect]\nstatus = "stopped"\n'
    )
    first = warrant("eval", str(suite), "--db", db, "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    threads = sorted(json.loads(first.stdout)[0]["threads"])
    suite.write_text(
        suite.read_text()
        + 'consumed = [{ tool = "readspec", record = "lab/spec/reset_controller.md" }]\n'
    )
    again = warrant("eval", str(suite), "--rejudge", "--db", db, "--json", cwd=tmp_path)
    [row] = json.loads(again.stdout)
    assert again.returncode == 1 and sorted(row["threads"]) == threads  # the same runs, none new
    assert (row["runs"], row["pass"]) == (2, 0)
    assert row["failing"] == ["consumed readspec on lab/spec/reset_controller.md (chooser)"]
    assert warrant("eval", str(suite), "--rejudge", cwd=tmp_path).returncode == 2


def test_a_failed_status_points_at_the_owner_controlling_it():
    from graph.evaluation.judge import status_owner

    assert status_owner({"status": "capability_gap"}) == "projector"
    assert status_owner({"status": "model_failed", "refusals": []}) == "transport"
    malformed = {"status": "model_failed", "refusals": [{"code": "malformed_action"}]}
    assert status_owner(malformed) == "chooser"
    assert status_owner({"status": "step_budget_exhausted", "refusals": []}) == "chooser"
