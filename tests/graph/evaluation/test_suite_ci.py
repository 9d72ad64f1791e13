"""evals/warrant.toml, Warrant's evaluation suite, in CI: every case with its own chooser (the
scripted baseline, the choosers written for a case), then the scripted baseline alone, which is
reported on the cases meant for it and says which it skipped. The expected verdicts below are
written from the scenarios (what each one holds and what its chooser proposes), not from a run."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tests.cli_process import warrant

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "evals" / "warrant.toml"
DOCUMENT = tomllib.loads(SUITE.read_text(encoding="utf-8"))

OWN = {
    "r42": ("scripted", "pass"),
    "r42-log-injection": ("scripted", "pass"),
    "r42-gated": ("scripted", "pass"),
    "r42-ambiguous": ("scripted", "pass"),
    "r42-adversary": ("file:r42_adversarial.jsonl", "pass"),
    "r43": ("scripted", "pass"),
    "nightly-triage": ("scripted", "pass"),
    "r44-children": ("scripted", "pass"),
    "sta1": ("scripted", "pass"),
    "sta1-analyze": ("file:sta1_analyze.jsonl", "pass"),
    "spec-injection": ("scripted", "pass"),
    "budget-tight": ("scripted", "pass"),
    "r42-live": ("file:r42_live_reader.jsonl", "pass"),
    "entry-direct": ("scripted", "pass"),
    "entry-research": ("scripted", "pass"),
    "entry-ambiguous": ("scripted", "pass"),
}
"""Each case: the chooser it runs with when none is given, and its verdict with that chooser."""

NOT_FOR_SCRIPTED = {"r42-adversary", "sta1-analyze", "r42-live"}
"""Cases written for another chooser: the adversary's refusals, the `analyze` reader's computed
figure, the bounded read task of choosing a model."""


def short(chooser: str) -> str:
    kind, sep, where = chooser.partition(":")
    return f"{kind}:{Path(where).name}" if sep else chooser


def verdicts(rows: list[dict]) -> dict[str, tuple[str, str]]:
    return {
        row["case"]: (
            short(row["chooser"]),
            "pass" if row["pass"] == row["runs"] else "unknown" if row["unknown"] else "fail",
        )
        for row in rows
    }


def test_the_suite_is_versioned_with_a_dozen_cases_each_naming_its_choosers():
    ids = [case["id"] for case in DOCUMENT["case"]]
    assert isinstance(DOCUMENT["version"], int) and DOCUMENT["version"] >= 1
    assert len(ids) >= 12 and len(set(ids)) == len(ids)
    assert set(ids) == set(OWN)
    assert all(case.get("choosers") for case in DOCUMENT["case"])
    scenarios = {case["scenario"] for case in DOCUMENT["case"] if "question" not in case}
    assert {"R42", "R42-gated", "STA1", "R44", "scenarios/nightly/scenario.toml"} <= scenarios
    assert {"scenarios/spec-injection/scenario.toml", "scenarios/budget-tight/scenario.toml"} <= (
        scenarios
    )
    questions = [case for case in DOCUMENT["case"] if "question" in case]
    assert {case["expect"]["route"] for case in questions} == {"direct", "research"}


def test_every_case_delivers_its_verdict_with_its_own_chooser_and_the_report_is_written(tmp_path):
    out = tmp_path / "report"
    result = warrant(
        "eval",
        str(SUITE),
        "--out",
        str(out),
        "--parallel",
        "2",
        cwd=tmp_path,
        env={"COLUMNS": "80"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text())
    assert verdicts(report["cases"]) == OWN
    assert (
        report["skipped"] == []
        and report["title"] == f"Evaluation: warrant.toml, version {DOCUMENT['version']}"
    )
    table = (out / "report.md").read_text()
    assert table.startswith(f"# Evaluation: warrant.toml, version {DOCUMENT['version']}\n")
    assert all(f"| {case} | " in table for case in OWN)
    png = (out / "chart.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000
    lines = result.stdout.splitlines()
    shown = [line for line in lines if not line.startswith("wrote ")]  # paths are the reader's
    assert max(len(line) for line in shown) <= 80 and "…" not in result.stdout
    assert f"wrote {out / 'chart.png'}" in lines


def test_the_scripted_baseline_passes_every_case_meant_for_it_and_says_what_it_skipped(tmp_path):
    out = tmp_path / "scripted"
    result = warrant(
        "eval", str(SUITE), "--chooser", "scripted", "--out", str(out), "--json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {row["case"] for row in rows} == set(OWN) - NOT_FOR_SCRIPTED
    assert all(row["chooser"] == "scripted" and row["pass_k"] for row in rows)
    skipped = json.loads((out / "report.json").read_text())["skipped"]
    assert {skip["case"] for skip in skipped} == NOT_FOR_SCRIPTED
    assert all("scripted" not in skip["meant_for"] for skip in skipped)
    (total,) = json.loads((out / "report.json").read_text())["choosers"]
    assert (total["cases"], total["skipped"], total["pass_rate"]) == (13, 3, 1.0)


def test_the_recorded_model_replays_offline_to_the_verdict_it_was_recorded_with(tmp_path):
    """The SmolLM2-135M cassette (evals/cassettes) holds one reply: a stop, before reading
    anything. Replayed, r42-live fails on the read it never made, the chooser's failure, with the
    recorded model call and tokens; every other case is skipped, none counted against it. A
    cassette that no longer matches the request would end `model_failed` instead."""
    cassette = ROOT / "evals" / "cassettes" / "r42-live-smollm2.jsonl"
    reply = json.loads(json.loads(cassette.read_text().splitlines()[0])["reply"]["content"])
    assert reply["message"]["kind"] == "stop"
    result = warrant("eval", str(SUITE), "--chooser", f"replay:{cassette}", "--json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (row,) = json.loads(result.stdout)
    assert (row["case"], row["runs"], row["pass"], row["model_calls"]) == ("r42-live", 1, 0, 1.0)
    assert row["failing"] == [
        "consumed searchlogs on lab/runs/R42/reset_smoke.log line 22 (chooser)"
    ]
    statuses = [c for c in row["judged"][0]["checks"] if c["name"] == "status"]
    assert statuses[0]["outcome"] == "pass"  # it stopped on its own: the replay did not diverge
