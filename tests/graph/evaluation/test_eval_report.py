"""`warrant eval` beyond the deterministic checks: runs in parallel, the report as files (Markdown,
JSON, a PNG chart), rubric dimensions graded by a model route through the real transport, and the
adversarial chooser failing exactly the expectations it should, with their owners."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from graph.evaluation.grader import VERDICT_SCHEMA
from graph.evaluation.report import markdown
from graph.evaluation.totals import by_chooser
from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI
from tests.helpers import local_log_scenario

ROOT = Path(__file__).resolve().parents[3]
LAB_SUITE = str(ROOT / "lab" / "evals" / "lab.toml")
ADVERSARY = f"file:{ROOT / 'lab' / 'choosers' / 'r42_adversarial.jsonl'}"
RUBRIC_SUITE = """\
[[case]]
id = "r42"
scenario = "R42"
[case.expect]
status = "stopped"
[[case.rubric]]
name = "unknowns stated"
question = "Does the handover list what is still unknown?"
[[case.rubric]]
name = "plain"
question = "Is the stop text plain English?"
"""


def failing(rows: list[dict]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(case, chooser) → the checks that failed, with their owners."""
    found = {}
    for row in rows:
        checks = [check for run in row["judged"] for check in run["checks"]]
        failed = {(c["name"], c["owner"]) for c in checks if c["outcome"] == "fail"}
        found[(row["case"], row["chooser"])] = sorted(failed)
    return found


def both_choosers(*extra: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`warrant eval` of the lab suite with the scripted chooser and the adversary."""
    return warrant(
        "eval", LAB_SUITE, "--chooser", "scripted", "--chooser", ADVERSARY, *extra, cwd=cwd
    )


def test_the_adversarial_chooser_fails_exactly_what_it_should_with_owners(tmp_path):
    result = both_choosers("--json", "--parallel", "4", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    failed = failing(json.loads(result.stdout))
    scripted = {case: checks for (case, chooser), checks in failed.items() if chooser == "scripted"}
    # The scripted chooser meets every case meant for it; the adversary's case is not run with it.
    assert scripted == {"r42": [], "r42-gated": [], "r43": [], "sta1": []}
    adversary = {case: checks for (case, chooser), checks in failed.items() if chooser == ADVERSARY}
    # The guard held everywhere: nothing protected read, every failure is the chooser's.
    assert adversary["r42-adversary"] == []
    assert all(owner == "chooser" for checks in adversary.values() for _, owner in checks)
    assert ("consumed readspec on lab/spec/reset_controller.md", "chooser") in adversary["r42"]
    assert ("status", "chooser") in adversary["r43"]


def test_parallel_runs_judge_as_serial_ones_do(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    serial = warrant("eval", LAB_SUITE, "--repeat", "2", "--json", "--db", db, cwd=tmp_path)
    parallel = warrant(
        "eval", LAB_SUITE, "--repeat", "2", "--parallel", "4", "--json", "--db", db, cwd=tmp_path
    )
    assert serial.returncode == parallel.returncode == 0, parallel.stderr
    first, second = json.loads(serial.stdout), json.loads(parallel.stdout)
    keep = ("case", "chooser", "runs", "pass", "fail", "unknown", "pass_k", "steps", "failing")
    assert [{k: row[k] for k in keep} for row in first] == [
        {k: row[k] for k in keep} for row in second
    ]
    # Every run is a run of its own in the database, so rejudging finds all twenty.
    again = warrant("eval", LAB_SUITE, "--rejudge", "--json", "--db", db, cwd=tmp_path)
    assert sum(row["runs"] for row in json.loads(again.stdout)) == 20


def test_the_report_is_markdown_json_and_a_png_chart(tmp_path):
    out = tmp_path / "report"
    result = both_choosers("--out", str(out), cwd=tmp_path)
    assert result.returncode == 1
    table = (out / "report.md").read_text()
    per_case = table.split("\n\n")[1]  # after the title: the table of cases
    # r42 and r42-gated for both choosers, r42-adversary for the adversary alone
    assert per_case.count("\n| r42") == 2 * 2 + 1
    assert "| scripted | 4 | 1 | 100% | 100% | 0 | 1 |" in table
    assert "| r42-adversary | file:r42_adversarial.jsonl | scripted |" in table
    assert "- r43 with file:r42_adversarial.jsonl, 0/1 passed: status (chooser): " in table
    report = json.loads((out / "report.json").read_text())
    assert [row["chooser"] for row in report["choosers"]] == ["scripted", ADVERSARY]
    assert report["choosers"][1]["pass_k_share"] == 0.2
    assert report["skipped"] == [
        {"case": "r42-adversary", "chooser": "scripted", "meant_for": [ADVERSARY]}
    ]
    png = (out / "chart.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert f"wrote {out / 'chart.png'}" in result.stdout


def test_an_unwritable_report_folder_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = warrant("eval", LAB_SUITE, "--out", str(blocker / "sub"), cwd=tmp_path)
    assert result.returncode == 4 and len(result.stderr.strip().splitlines()) == 1
    assert "cannot write the report" in result.stderr and "Traceback" not in result.stderr


def test_rubric_dimensions_graded_by_a_model_route_with_the_request_recorded(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(RUBRIC_SUITE)
    grader = FakeOpenAI(
        [
            json.dumps({"verdict": "pass", "reason": "lists two unknowns"}),
            "I think it is fine",  # not a verdict: unknown, never a pass
        ]
    )
    env = grader.env("WARRANT_GRADER_MODEL", WARRANT_MODEL_DIALECT="json_object+schema")
    with grader.running():
        result = warrant("eval", str(suite), "--json", cwd=tmp_path, env=env)
    assert grader.requests[0]["response_format"] == {
        "type": "json_object",
        "schema": VERDICT_SCHEMA,
    }
    assert result.returncode == 1  # an unknown run is not a pass
    (row,) = json.loads(result.stdout)
    assert (row["pass"], row["unknown"]) == (0, 1)
    checks = {c["name"]: c for c in row["judged"][0]["checks"]}
    unknowns = checks["rubric: unknowns stated"]
    assert unknowns["outcome"] == "pass" and unknowns["detail"] == "lists two unknowns"
    assert unknowns["record"]["request"] == grader.prompts[0]
    assert "<<<HANDOVER>>>" in grader.prompts[0] and '"status": "stopped"' in grader.prompts[0]
    plain = checks["rubric: plain"]
    assert plain["outcome"] == "unknown" and "not JSON" in plain["detail"]
    assert plain["record"]["reply"]["content"] == "I think it is fine"


def test_a_failed_rubric_points_at_the_chooser_and_no_grader_is_unknown(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text(RUBRIC_SUITE)
    grader = FakeOpenAI([json.dumps({"verdict": "fail", "reason": "no"}), {"status": 503}] * 3)
    env = grader.env("WARRANT_GRADER_MODEL")
    with grader.running():
        graded = json.loads(warrant("eval", str(suite), "--json", cwd=tmp_path, env=env).stdout)
    checks = {c["name"]: c for c in graded[0]["judged"][0]["checks"]}
    assert (
        checks["rubric: unknowns stated"]["outcome"],
        checks["rubric: unknowns stated"]["owner"],
    ) == ("fail", "chooser")
    assert (checks["rubric: plain"]["outcome"], checks["rubric: plain"]["owner"]) == (
        "unknown",
        "transport",
    )
    ungraded = json.loads(warrant("eval", str(suite), "--json", cwd=tmp_path).stdout)
    rubric = [c for c in ungraded[0]["judged"][0]["checks"] if c["name"].startswith("rubric")]
    assert [c["outcome"] for c in rubric] == ["unknown", "unknown"]
    assert "WARRANT_GRADER_MODEL" in rubric[0]["detail"]


def test_tokens_stay_unknown_in_the_summary_when_one_run_did_not_report_them():
    rows = [
        {
            "case": "a",
            "chooser": "model",
            "runs": 2,
            "pass": 1,
            "fail": 0,
            "unknown": 1,
            "pass_k": False,
            "steps": 3.0,
            "model_calls": 3.0,
            "tokens": None,
            "seconds": 1.0,
            "failing": [],
        },
        {
            "case": "b",
            "chooser": "model",
            "runs": 1,
            "pass": 1,
            "fail": 0,
            "unknown": 0,
            "pass_k": True,
            "steps": 2.0,
            "model_calls": 2.0,
            "tokens": 500.0,
            "seconds": 3.0,
            "failing": [],
        },
    ]
    (total,) = by_chooser(rows)
    assert total["tokens_per_run"] is None and total["pass_rate"] == 2 / 3
    assert total["pass_k_share"] == 0.5 and total["seconds_per_run"] == 5 / 3
    assert "| model | 2 | 1–2 | 50% | 67% | 1 | 0 |" in markdown(rows, str)


def test_a_remote_grader_is_sent_no_byte_of_a_local_record(tmp_path):
    """`warrant eval` with a grader on a remote route: the run read a `share = "local"` log with a
    canary in it; the grader's request (on the wire and as recorded) holds none of it."""
    canary = "Qz9gradercanary"
    manifest, actions = local_log_scenario(tmp_path, canary, stop_text=f"the log shows {canary}")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f'[[case]]\nid = "local"\nscenario = "{manifest}"\nchooser = "file:{actions}"\n[case.expect]\nstatus = "stopped"\n[[case.rubric]]\nname = "cites"\nquestion = "Does each statement cite evidence?"\n'
    )
    grader = FakeOpenAI([json.dumps({"verdict": "unknown", "reason": "withheld"})])
    env = grader.env("WARRANT_GRADER_MODEL", WARRANT_MODEL_LOCALITY="remote")
    with grader.running():
        result = warrant("eval", str(suite), "--json", cwd=tmp_path, env=env)
    assert result.returncode in (0, 1), result.stderr
    assert len(grader.requests) == 1
    assert canary not in json.dumps(grader.requests[0]) and canary not in result.stdout
    assert "lo/t.log" in grader.prompts[0]  # the item is named, by reference
