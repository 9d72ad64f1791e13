"""A folder drafted by `warrant scenario new` runs with no `--goal`: its profile's own question is
the goal (the draft leaves `goal` commented out), recorded as any goal is."""

import json
from pathlib import Path

from scenario.profiles import PROFILE_GOALS
from tests.cli_process import warrant


def _nightly(folder: Path) -> None:
    (folder / "runs").mkdir(parents=True)
    for n in range(3):
        (folder / "runs" / f"t{n}.log").write_text(
            f"UVM_INFO a.sv(1) @ 0: reporter [RNTST] Running test t{n}...\n"
            "UVM_ERROR a.sv(2) @ 20: env.chk [FIFO] overflow\n"
            "--- UVM Report Summary ---\nUVM_ERROR :    1\nTEST FAILED\n"
        )


def test_a_drafted_triage_folder_runs_with_its_profiles_goal(tmp_path):
    _nightly(tmp_path)
    drafted = warrant("scenario", "new", ".", cwd=tmp_path)
    assert drafted.returncode == 0, drafted.stderr
    manifest = (tmp_path / "scenario.toml").read_text()
    assert "\ngoal =" not in manifest  # the draft leaves the goal to the author
    ran = warrant("run", "scenario.toml", "--db", "memory", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    handover = json.loads(ran.stdout)
    assert handover["goal"] == PROFILE_GOALS["triage"] and handover["status"] == "stopped"
    given = warrant(
        "run", "scenario.toml", "--db", "memory", "--json", "--goal", "Why t1?", cwd=tmp_path
    )
    assert json.loads(given.stdout)["goal"] == "Why t1?"
