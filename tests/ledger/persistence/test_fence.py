"""One line of checkpoints per thread: a worker that holds no lease (a served run) and
`warrant resume` advancing the same run at once cannot fork it; the second writer stops."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import pytest
from langgraph.checkpoint.base import create_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graph.build import compile_graph
from ledger.persistence.savers import FENCE_MESSAGE, SQLITE_FENCE, open_saver
from tests.cli_process import (
    assert_exactly_once,
    ledger,
    run_json,
    start_paused,
    warrant,
    without_thread,
)
from tests.helpers import R42_CALLS

pytestmark = pytest.mark.slow  # real processes: killed workers, servers


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "fence.sqlite")
    return request.getfixturevalue("postgres_url")


def test_a_run_advanced_by_two_workers_at_once_advances_once(db, tmp_path):
    baseline = run_json("run", "R42", "--db", db, "--thread", "alone", cwd=tmp_path)
    first = start_paused(
        "run", "R42", "--db", db, "--thread", "race", point="before:guard@2", cwd=tmp_path
    )
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


def test_a_write_the_fence_refuses_on_sqlite_leaves_the_database_unlocked(tmp_path):
    """A fork's write (an older checkpoint's successor) is refused with the fence's message and
    ends its transaction, even on the server's saver, which does not roll back on an error: every
    other writer goes on at once (before, each waited out its busy timeout: `database is locked`).
    A database with the earlier fence (`ABORT`) gets the current one when it is opened."""
    db = tmp_path / "fence.sqlite"
    with sqlite3.connect(db) as earlier:
        SqliteSaver(earlier).setup()
        earlier.execute(SQLITE_FENCE.replace("RAISE(ROLLBACK", "RAISE(ABORT"))
    config = {"configurable": {"thread_id": "forked"}}
    with open_saver(str(db)) as storage:
        graph = compile_graph(*storage)
        graph.invoke({"scenario": "R42"}, config, durability="sync")
        older = storage.saver.get_tuple(list(graph.get_state_history(config))[5].config)

    async def fork() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
            successor = create_checkpoint(older.checkpoint, None, older.metadata["step"] + 1)
            with pytest.raises(sqlite3.IntegrityError, match=FENCE_MESSAGE):
                await saver.aput(older.config, successor, {"source": "fork", "step": 0}, {})
            other = sqlite3.connect(db, timeout=0)  # no wait: a held lock fails at once
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
            other.close()

    asyncio.run(fork())
