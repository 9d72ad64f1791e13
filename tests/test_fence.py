"""One line of checkpoints per thread: a worker that holds no lease (a served run) and
`warrant resume` advancing the same run at once cannot fork it; the second writer stops."""

from __future__ import annotations

import json

import pytest

from graph.build import compile_graph
from graph.persistence import open_saver
from tests.cli_process import (
    assert_exactly_once,
    ledger,
    run_json,
    start_paused,
    warrant,
    without_thread,
)

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

R42_CALLS = {"c1", "c2", "c3"}


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "fence.sqlite")
    return request.getfixturevalue("postgres_url")


def test_a_run_advanced_by_two_workers_at_once_advances_once(db, tmp_path):
    baseline = run_json("run", "R42", "--db", db, "--thread", "alone", cwd=tmp_path)
    first = start_paused("run", "R42", "--db", db, "--thread", "race", point="before:guard@2", cwd=tmp_path)  # fmt: skip
    first.wait_paused()
    first.kill()  # the run stops before guard@2
    cli = start_paused("resume", "race", "--db", db, point="before:guard@2", cwd=tmp_path)
    cli.wait_paused()  # the CLI holds the lease and has read the same checkpoint
    with open_saver(db) as storage:  # a worker without the lease, as a served run is
        graph = compile_graph(*storage)
        graph.invoke(None, {"configurable": {"thread_id": "race"}}, durability="sync")
        assert "handover" in graph.get_state({"configurable": {"thread_id": "race"}}).values
    late = cli.release()
    assert late.returncode == 2, late.stderr
    assert "advanced by another worker" in late.stderr and "Traceback" not in late.stderr
    assert_exactly_once(ledger("race", db), R42_CALLS)
    shown = warrant("show", "race", "--db", db, "--json", cwd=tmp_path)
    assert without_thread(json.loads(shown.stdout)) == without_thread(baseline)
