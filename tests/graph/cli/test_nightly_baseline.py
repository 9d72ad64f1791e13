"""A nightly folder with no chooser and no script: `scenario new`, then `run` runs the triage
baseline, which ends with the buckets as the chooser's statements, each citing its receipts.
Ground truth is the independent reference over the raw files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lab.nightly import write_family
from tests.cli_process import run_json, warrant
from tests.tools.logs import triage_reference as reference
from tools.logs import familypool


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def nightly(folder: Path, count: int = 200) -> dict[str, Path]:
    """`count` generated logs under `runs/N7/` and a history of one earlier run, each test
    passing: the record ids and files."""
    paths = {
        f"runs/N7/{path.name}": path
        for path in write_family(folder / "runs" / "N7", count, 3000, seed=5)
    }
    history = folder / "history"
    history.mkdir()
    with (history / "runs.csv").open("w", newline="") as handle:
        rows = csv.writer(handle)
        rows.writerow(["run", "date", "test", "status", "signature"])
        for member in sorted(paths):
            rows.writerow(["N6", "2026-12-03", reference.test_of(member), "PASS", ""])
    return paths


def test_a_nightly_with_no_chooser_ends_with_its_buckets_as_statements(tmp_path):
    folder = tmp_path / "nightly"
    paths = nightly(folder)
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    db = str(tmp_path / "runs.sqlite")
    handover = run_json(
        "run",
        str(folder / "scenario.toml"),
        "--goal",
        "Which tests failed?",
        "--db",
        db,
        cwd=tmp_path,
    )
    assert handover["status"] == "stopped"
    evidence = handover["evidence"]
    assert evidence[0]["tool"] == "triage" and evidence[0]["record"] == "runs/N7/*.log"
    assert {item["tool"] for item in evidence[1:]} <= {"readlines", "getrunhistory"}
    want = reference.expected(paths)
    largest = sorted(want.buckets.items(), key=lambda pair: (-len(pair[1]), pair[0]))
    statements = handover["hypotheses"]
    assert len(statements) == min(10, len(largest))  # every bucket the receipt shows
    for (signature, members), said in zip(largest, statements, strict=False):
        first = want.members[members[0]]
        assert f"{len(members)} failure(s)" in said["statement"], signature
        assert f"{first.name}:{first.error_line}" in said["statement"]
        assert said["refs"][0] == f"E1:{first.name}:L{first.error_line}"  # its own member
        assert "(new against the history)" in said["statement"]  # every test passed in N6
    # What the triage could not tell is the handover's unknown, about E1.
    none = sorted(name for name, member in want.members.items() if member.verdict == "none")
    assert none and any(
        unknown.startswith(f"E1: the verdict of {len(none)} member(s) whose log states none: ")
        and none[0] in unknown
        for unknown in handover["unknowns"]
    )
    # Each bucket's example was read around its line, and its test's history looked up.
    read = {
        (item["args"]["path"], item["args"]["start"])
        for item in evidence[1:]
        if item["tool"] == "readlines"
    }
    assert (largest[0][1][0], max(1, want.members[largest[0][1][0]].error_line - 5)) in read


def test_a_family_calls_progress_is_on_the_console_and_never_in_json(tmp_path):
    folder = tmp_path / "nightly"
    nightly(folder, count=40)
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    manifest = str(folder / "scenario.toml")
    shown = warrant("run", manifest, "--goal", "Which failed?", "--db", "memory", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    reading = [line for line in shown.stderr.splitlines() if " reading " in line]
    assert reading[0].startswith("turn 1 reading   t1c1 triage → E1 · ")
    assert reading[-1].endswith("· 40/40 members")
    assert [int(line.split("· ")[-1].split("/")[0]) * 4 // 40 for line in reading] == [
        0,
        1,
        2,
        3,
        4,
    ]
    machine = warrant(
        "run", manifest, "--goal", "Which failed?", "--db", "memory", "--json", cwd=tmp_path
    )
    assert machine.returncode == 0 and " reading " not in machine.stderr + machine.stdout
    assert json.loads(machine.stdout)["evidence"][0]["tool"] == "triage"
