"""The default store: the nearest project's `.warrant/` found upward from the current folder, else
the user's (`$XDG_DATA_HOME/warrant/warrant.sqlite`); never a new store in the current folder. An
approver who runs `warrant inbox` from another folder sees what waits for them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli_process import warrant

ASK = {"summary": "ask", "message": {"kind": "ask_user", "question": "Which seed failed first?"}}


def user_store() -> Path:
    """The user store of this test (conftest gives each test its own `$XDG_DATA_HOME`)."""
    return Path(os.environ["XDG_DATA_HOME"], "warrant", "warrant.sqlite")


def waiting_run(cwd: Path, chooser: str) -> str:
    """Start a run that waits for a person's answer, in `cwd`; its interaction id."""
    result = warrant(
        "run", "R42", "--chooser", chooser, "--thread", "asks", "--json", "-q", cwd=cwd
    )
    assert result.returncode == 3, result.stderr
    [pending] = json.loads(result.stdout)["pending"]
    return pending["interaction_id"]


def flat(text: str) -> str:
    """Help text without the line breaks and frames it is wrapped in."""
    return " ".join(text.replace("│", " ").split())


def test_from_a_subfolder_the_inbox_finds_the_projects_store_and_what_waits(tmp_path, action_file):
    project, deeper = tmp_path / "project", tmp_path / "project" / "src" / "deeper"
    (project / ".warrant").mkdir(parents=True)
    deeper.mkdir(parents=True)
    interaction = waiting_run(project, action_file([ASK]))
    assert (project / ".warrant" / "warrant.sqlite").is_file()

    rows = json.loads(warrant("inbox", "--json", cwd=deeper).stdout)
    assert [row["interaction_id"] for row in rows] == [interaction]
    listed = warrant("inbox", cwd=deeper, env={"COLUMNS": "200"})
    assert interaction in listed.stdout and "Which seed failed first?" in listed.stdout
    assert warrant("show", "asks", "--json", cwd=deeper).returncode == 0
    assert not user_store().exists() and not (deeper / ".warrant").exists()

    helped = warrant("--help", cwd=deeper, env={"COLUMNS": "400"})
    assert f"Here: the project's store {project / '.warrant' / 'warrant.sqlite'}." in flat(
        helped.stdout
    )


def test_outside_any_project_runs_are_kept_in_the_users_store(tmp_path, action_file):
    started, elsewhere = tmp_path / "one", tmp_path / "two"
    started.mkdir()
    elsewhere.mkdir()
    interaction = waiting_run(started, action_file([ASK]))
    assert user_store().is_file() and not (started / ".warrant").exists()

    rows = json.loads(warrant("inbox", "--json", cwd=elsewhere).stdout)
    assert [row["interaction_id"] for row in rows] == [interaction]
    helped = warrant("--help", cwd=elsewhere, env={"COLUMNS": "400"})
    assert f"Here: your user store {user_store()}" in flat(helped.stdout)


def test_nothing_waiting_and_no_run_name_the_store_looked_in(tmp_path):
    nothing = warrant("inbox", cwd=tmp_path)
    assert nothing.returncode == 0
    assert nothing.stdout.strip() == f"Nothing is waiting for a person in {user_store()}."
    missing = warrant("show", "nope", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"error: no run with thread id 'nope' in {user_store()}"
    assert not (tmp_path / ".warrant").exists()


def test_db_and_warrant_db_still_override_the_projects_store(tmp_path):
    (tmp_path / ".warrant").mkdir()
    given = tmp_path / "given.sqlite"
    by_option = warrant("inbox", "--db", str(given), cwd=tmp_path)
    assert by_option.stdout.strip() == f"Nothing is waiting for a person in {given}."
    by_env = warrant("inbox", cwd=tmp_path, env={"WARRANT_DB": str(given)})
    assert by_env.stdout.strip() == f"Nothing is waiting for a person in {given}."
    assert not (tmp_path / ".warrant" / "warrant.sqlite").exists()
