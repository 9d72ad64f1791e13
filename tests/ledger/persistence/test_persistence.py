"""The same run against each checkpointer: memory, SQLite and the real PostgreSQL server."""

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from graph.build import compile_graph
from lab import LAB_DIR
from ledger.context import WarrantContext
from ledger.persistence.locations import redact
from ledger.persistence.retention import last_activity, prune, thread_ids
from ledger.persistence.savers import StorageUnavailable, open_run, open_saver
from nodes.choosers import ScriptedChooser
from scenario.registry import load_scenario
from tests.helpers import R42_CALLS, R42_EVENTS, R42_REFS, recorded


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def db(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "runs" / "warrant.sqlite")
    if request.param == "postgres":
        return request.getfixturevalue("postgres_url")
    return "memory"


def run_r42(db: str, thread: str) -> dict:
    """Run R42 to its end; its state with the record read back from the store."""
    config = {"configurable": {"thread_id": thread}}
    with open_saver(db) as storage:
        graph = compile_graph(*storage)
        graph.invoke({"scenario": "R42"}, config, durability="sync", context=WarrantContext())
        return recorded(graph, config)


def test_the_r42_run_is_the_same_on_every_backend(db):
    state = run_r42(db, "conformance")
    assert state["status"] == "stopped"
    assert [item["ref"] for item in state["evidence"]] == R42_REFS
    assert all(
        item["excerpt"] and len(item["excerpt"]) == item["lines"] for item in state["evidence"]
    )
    assert [event["seq"] for event in state["events"]] == list(range(1, R42_EVENTS + 1))
    assert state["cursor"]["events"] == R42_EVENTS and state["cursor"]["observations"] == len(
        R42_CALLS
    )
    assert "events" not in state["seals"] and "evidence" not in state["seals"]  # not channels


@pytest.fixture(params=["sqlite", "postgres"])
def durable_db(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "warrant.sqlite")
    return request.getfixturevalue("postgres_url")


def test_a_durable_run_is_readable_from_a_new_connection(durable_db):
    db = durable_db
    first = run_r42(db, "durable")
    with open_saver(db) as storage:
        stored = recorded(compile_graph(*storage), {"configurable": {"thread_id": "durable"}})
    assert stored["handover"] == first["handover"]
    assert stored["events"] == first["events"]
    assert stored["evidence"] == first["evidence"]


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
    with open_run(durable_db, "embedded") as storage:
        graph = compile_graph(*storage)
        crashing = WarrantContext(choosers={"s": CrashingChooser(crash_turn=3)})
        with pytest.raises(KeyboardInterrupt):
            graph.invoke(
                {"scenario": "R42", "chooser": "s"}, config, durability="sync", context=crashing
            )
    with open_run(durable_db, "embedded") as storage:
        graph = compile_graph(*storage)
        graph.invoke(
            None,
            config,
            durability="sync",
            context=WarrantContext(choosers={"s": CrashingChooser(None)}),
        )
        final = recorded(graph, config)
    assert [item["ref"] for item in final["evidence"]] == R42_REFS
    executed = [
        event["payload"]["call_id"] for event in final["events"] if event["type"] == "executed"
    ]
    assert executed == R42_CALLS
    assert [event["seq"] for event in final["events"]] == list(range(1, R42_EVENTS + 1))


def test_sqlite_prune_keeps_the_latest_checkpoint_and_the_handover(tmp_path):
    db = str(tmp_path / "w.sqlite")
    first = run_r42(db, "a")
    run_r42(db, "b")
    with open_saver(db) as storage:
        report = prune(storage, keep_latest=True, older_than_days=None, now=time.time())
        rows = dict(
            storage.saver.conn.execute(
                "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
            ).fetchall()
        )
        kept = recorded(compile_graph(*storage), {"configurable": {"thread_id": "a"}})
    assert (report.pruned, rows, report.bodies) == (["a", "b"], {"a": 1, "b": 1}, 0)
    assert kept["handover"] == first["handover"]
    assert (kept["events"], kept["evidence"]) == (first["events"], first["evidence"])
    with open_saver(db) as storage:
        report = prune(storage, keep_latest=False, older_than_days=0, now=time.time() + 1)
        assert report.deleted == ["a", "b"]
        assert thread_ids(storage.saver) == []
        # The runs' records went with them, and the bodies no run refers to any more.
        assert report.bodies > 0
        assert storage.store.search(("warrant",), limit=1) == []


def test_prune_deletes_an_old_runs_record_and_keeps_the_bodies_another_run_uses(tmp_path):
    db = str(tmp_path / "w.sqlite")
    run_r42(db, "old")
    newer = run_r42(db, "new")  # reads the same records: the same excerpt bodies
    with open_saver(db) as storage:
        # The cutoff halfway between the two runs' last checkpoints, as they were stamped
        last = last_activity(storage.saver)
        assert last["old"] < last["new"]
        halfway_days = (last["new"] - last["old"]) / 2 / 86400
        report = prune(storage, keep_latest=False, older_than_days=halfway_days, now=last["new"])
        assert (report.deleted, report.bodies) == (["old"], 0)
        assert storage.store.search(("warrant", "runs", "old"), limit=1) == []
        still = recorded(compile_graph(*storage), {"configurable": {"thread_id": "new"}})
    assert still["evidence"] == newer["evidence"]
    assert all(item["excerpt"] and "body_missing" not in item for item in still["evidence"])
