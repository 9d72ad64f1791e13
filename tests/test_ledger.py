"""The ledger is a chain of sealed events: `warrant events THREAD --verify` finds an event edited,
removed or added in the database, and passes a run's own ledger, also after a crash."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graph.ledger import chain_break
from tests.cli_process import start_paused, warrant


def edit_latest_ledger(db: Path, thread: str, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    """Change the events of the thread's latest checkpoint in place, as a database edit would."""
    serde = JsonPlusSerializer()
    with sqlite3.connect(db) as conn:
        kind, blob, checkpoint_id = conn.execute(
            "SELECT type, checkpoint, checkpoint_id FROM checkpoints WHERE thread_id = ?"
            " ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
        checkpoint = serde.loads_typed((kind, blob))
        edit(checkpoint["channel_values"]["events"])
        _, changed = serde.dumps_typed(checkpoint)
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?",
            (changed, thread, checkpoint_id),
        )


@pytest.fixture
def finished(tmp_path) -> Path:
    db = tmp_path / "ledger.sqlite"
    ran = warrant("run", "R42", "--db", str(db), "--thread", "t", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return db


def verify(db: Path, cwd: Path) -> Any:
    return warrant("events", "t", "--db", str(db), "--verify", cwd=cwd)


def test_a_runs_own_ledger_verifies(finished, tmp_path):
    result = verify(finished, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "13 events, chain intact, every event sealed by this run" in result.stdout


def set_payload(events: list[dict[str, Any]]) -> None:
    events[3]["payload"]["outcome"] = "FORGED"


def set_last_payload(events: list[dict[str, Any]]) -> None:
    events[-1]["payload"]["evidence"] = 99  # no event follows it: its seal tells


def drop_one(events: list[dict[str, Any]]) -> None:
    del events[4]


def add_one(events: list[dict[str, Any]]) -> None:
    events.append({**events[-1], "seq": len(events) + 1, "prev": events[-1]["prev"]})


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (set_payload, "event 5 does not follow event 4"),
        (set_last_payload, "event 13 was not written by this run"),
        (drop_one, "event 5 is numbered 6"),
        (add_one, "event 14 does not follow event 13"),
    ],
)
def test_an_edited_ledger_fails_verification_where_it_breaks(finished, tmp_path, edit, said):
    edit_latest_ledger(finished, "t", edit)
    result = verify(finished, tmp_path)
    assert result.returncode == 1
    assert said in result.stderr and result.stderr.count("\n") == 1


def test_the_chain_holds_across_a_crash_and_a_resume(tmp_path):
    db = tmp_path / "crash.sqlite"
    process = start_paused("run", "R42", "--db", str(db), "--thread", "t", point="after:execute@c2", cwd=tmp_path)  # fmt: skip
    process.wait_paused()
    process.kill()
    resumed = warrant("resume", "t", "--db", str(db), "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert verify(db, tmp_path).returncode == 0


def test_chain_break_names_the_first_break():
    assert chain_break([]) is None
    assert (
        chain_break([{"seq": 1, "prev": "x"}])
        == "event 1 does not follow event 0 (its digest differs)"
    )
