"""The same run against each checkpointer: memory, SQLite and the real PostgreSQL server."""

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from graph.build import compile_graph
from graph.persistence import StorageUnavailable, open_run, open_saver, redact
from graph.retention import prune, thread_ids
from lab import LAB_DIR
from nodes.choosers import ScriptedChooser
from nodes.context import WarrantContext
from tools.records import load_scenario


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def db(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "runs" / "warrant.sqlite")
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return "memory"


def run_r42(db: str, thread: str) -> dict:
    with open_saver(db) as saver:
        graph = compile_graph(saver)
        return graph.invoke(
            {"scenario": "R42"},
            {"configurable": {"thread_id": thread}},
            durability="sync",
            context=WarrantContext(),
        )


def test_the_r42_run_is_the_same_on_every_backend(db):
    state = run_r42(db, "conformance")
    assert state["status"] == "stopped"
    assert [item["ref"] for item in state["evidence"]] == ["E1", "E2", "E3"]
    assert [event["seq"] for event in state["events"]] == list(range(1, 14))


@pytest.fixture(params=["sqlite", "postgres"])
def durable_db(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "warrant.sqlite")
    return request.getfixturevalue("postgres_url")


def test_a_durable_run_is_readable_from_a_new_connection(durable_db):
    db = durable_db
    first = run_r42(db, "durable")
    with open_saver(db) as saver:
        stored = compile_graph(saver).get_state({"configurable": {"thread_id": "durable"}}).values
    assert stored["handover"] == first["handover"]
    assert stored["events"] == first["events"]


def test_an_unreachable_postgres_is_reported_without_its_password():
    with (
        pytest.raises(StorageUnavailable) as caught,
        open_saver("postgresql://warrant:s3cret@127.0.0.1:1/none"),
    ):
        pass
    assert "s3cret" not in str(caught.value)
    assert "127.0.0.1:1" in str(caught.value)


def test_redact_hides_only_the_password():
    assert redact("postgresql://u:pw@h:5/d") == "postgresql://u:***@h:5/d"
    assert redact("postgresql://u@h/d") == "postgresql://u@h/d"


@dataclass
class CrashingChooser:
    """Proposes like the scripted baseline, but the process 'dies' when asked on `crash_turn`."""

    crash_turn: int | None
    actor: str = "chooser:scripted"

    def choose(self, view):
        if view.turn == self.crash_turn:
            raise KeyboardInterrupt("simulated crash")
        return ScriptedChooser(load_scenario(LAB_DIR / "R42.toml").script).choose(view)


def test_embedded_invoke_none_continues_a_crashed_run(durable_db):
    config = {"configurable": {"thread_id": "embedded"}}
    with open_run(durable_db, "embedded") as saver:
        graph = compile_graph(saver)
        crashing = WarrantContext(choosers={"s": CrashingChooser(crash_turn=3)})
        with pytest.raises(KeyboardInterrupt):
            graph.invoke(
                {"scenario": "R42", "chooser": "s"}, config, durability="sync", context=crashing
            )
    with open_run(durable_db, "embedded") as saver:
        graph = compile_graph(saver)
        final = graph.invoke(
            None,
            config,
            durability="sync",
            context=WarrantContext(choosers={"s": CrashingChooser(None)}),
        )
    assert [item["ref"] for item in final["evidence"]] == ["E1", "E2", "E3"]
    executed = [
        event["payload"]["call_id"] for event in final["events"] if event["type"] == "executed"
    ]
    assert executed == ["c1", "c2", "c3"]


def test_sqlite_prune_keeps_the_latest_checkpoint_and_the_handover(tmp_path):
    db = str(tmp_path / "w.sqlite")
    first = run_r42(db, "a")
    run_r42(db, "b")
    with open_saver(db) as saver:
        report = prune(saver, keep_latest=True, older_than_days=None, now=time.time())
        rows = dict(
            saver.conn.execute(
                "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
            ).fetchall()
        )
        kept = compile_graph(saver).get_state({"configurable": {"thread_id": "a"}}).values
    assert (report.pruned, rows) == (["a", "b"], {"a": 1, "b": 1})
    assert kept["handover"] == first["handover"]
    with open_saver(db) as saver:
        assert prune(saver, keep_latest=False, older_than_days=0, now=time.time() + 1).deleted == [
            "a",
            "b",
        ]
        assert thread_ids(saver) == []
