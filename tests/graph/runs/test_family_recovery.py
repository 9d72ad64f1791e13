"""A run over a record family, killed at a node boundary and resumed by a new process (which never
read the family's members): the guard and the executor find the members in the store, and the
handover is the one an uncut run gives, each call run once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.nightly import write_family
from tests.cli_process import assert_resumed_as_uncut, run_json, start_paused, warrant
from tests.helpers import RUNS_FAMILY, call, scenario_head, stop

pytestmark = pytest.mark.slow  # real processes, killed

POINTS = ["before:guard@1", "before:execute@c1", "after:execute@c1", "before:handover"]


def nightly(root: Path) -> tuple[str, str]:
    """A family of 40 generated logs approved by one glob, and a chooser that triages the family,
    searches two of its members listed by id, and stops: (manifest, chooser)."""
    ids = [f"runs/{path.name}" for path in write_family(root / "runs", 40, 1500, seed=5)]
    (root / "scenario.toml").write_text(
        scenario_head("NIGHTLY", "Which tests failed?", steps=4, evidence=4, deadline_s=3600)
        + RUNS_FAMILY
    )
    documents = [
        call("c1", "triage", family="runs/*.log"),
        call("c2", "searchfamily", family=ids[3:5], query="UVM_"),
        stop(),
    ]
    actions = root / "actions.jsonl"
    actions.write_text("".join(json.dumps(document) + "\n" for document in documents))
    return str(root / "scenario.toml"), f"file:{actions}"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_family_run_killed_at_a_boundary_resumes_in_a_new_process_to_the_same_handover(
    backend, tmp_path, request
):
    db = (
        str(tmp_path / "runs.sqlite")
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    manifest, chooser = nightly(tmp_path)
    baseline = run_json("run", manifest, "--chooser", chooser, "--db", db, cwd=tmp_path)
    assert [item["tool"] for item in baseline["evidence"]] == ["triage", "searchfamily"]
    assert all(item["error"] is None for item in baseline["evidence"])
    for point in POINTS:
        paused = start_paused(
            "run",
            manifest,
            "--chooser",
            chooser,
            "--db",
            db,
            "--thread",
            point,
            point=point,
            cwd=tmp_path,
        )
        paused.wait_paused()
        paused.kill()
        resumed = warrant(
            "resume", point, "--db", db, "--json", "--quiet", cwd=tmp_path, subprocess_=True
        )
        assert resumed.returncode == 0, resumed.stderr
        handover = json.loads(resumed.stdout)
        assert_resumed_as_uncut(handover, baseline, point, db, {"c1", "c2"})
