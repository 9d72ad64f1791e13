"""The ledger is a chain of sealed events: `warrant events THREAD --verify` finds an event edited,
removed or added in the database, and passes a run's own ledger, also after a crash."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graph.runs.ledger import chain_break
from ledger.commit import event_digest
from ledger.store import EVENTS, EVIDENCE, position, space
from tests.cli_process import start_paused, warrant
from tests.helpers import R42_EVENTS

Rows = dict[str, dict[str, Any]]
"""A run's stored items of one kind, by store key (`0000000005` for an event, `E2` for a receipt)."""


def edit_store(db: Path, thread: str, kind: str, edit: Callable[[Rows], None]) -> None:
    """Change a run's stored items of `kind` in place (rows changed, deleted or added in the
    store's table), as a database edit would."""
    prefix = ".".join(space(thread, kind))
    with sqlite3.connect(db) as conn:
        query = "SELECT key, value FROM store WHERE prefix = ?"
        rows = {key: json.loads(value) for key, value in conn.execute(query, (prefix,))}
        assert rows, f"no {kind} stored for {thread!r}"
        edited = copy.deepcopy(rows)
        edit(edited)
        for key in rows.keys() - edited.keys():
            conn.execute("DELETE FROM store WHERE prefix = ? AND key = ?", (prefix, key))
        for key, item in edited.items():
            if rows.get(key) != item:
                conn.execute(
                    "INSERT OR REPLACE INTO store (prefix, key, value) VALUES (?, ?, ?)",
                    (prefix, key, json.dumps(item).encode()),
                )


def edit_latest_cursor(db: Path, thread: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """Change the cursor of the thread's latest checkpoint in place, as a database edit would."""
    serde = JsonPlusSerializer()
    with sqlite3.connect(db) as conn:
        kind, blob, checkpoint_id = conn.execute(
            "SELECT type, checkpoint, checkpoint_id FROM checkpoints WHERE thread_id = ?"
            " ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
        checkpoint = serde.loads_typed((kind, blob))
        edit(checkpoint["channel_values"]["cursor"])
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


def assert_verification_fails(db: Path, cwd: Path, said: str) -> None:
    """`warrant events --verify` exits 1 with one line of error that says `said`."""
    result = verify(db, cwd)
    assert result.returncode == 1
    assert said in result.stderr and result.stderr.count("\n") == 1


def shown(db: Path, cwd: Path) -> list[dict[str, Any]]:
    result = warrant("events", "t", "--db", str(db), "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


LAST = R42_EVENTS
"""R42's ledger: admitted, then per call proposed/approved/executing/executed, then the stop."""


def test_a_runs_own_ledger_verifies(finished, tmp_path):
    result = verify(finished, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{LAST} events, chain intact, every event sealed by this run" in result.stdout
    assert [event["seq"] for event in shown(finished, tmp_path)] == list(range(1, LAST + 1))


def set_payload(events: Rows) -> None:
    events[position(4)]["payload"]["outcome"] = "FORGED"


def set_last_payload(events: Rows) -> None:
    events[position(LAST)]["payload"]["evidence"] = (
        99  # no event follows it: the cursor's head tells
    )


def drop_one(events: Rows) -> None:
    del events[position(5)]


def drop_last(events: Rows) -> None:
    del events[position(LAST)]  # the chain before it is intact: the cursor's head and count tell


def insert_one(events: Rows) -> None:
    """A copy of event 4 put in after it, chained to it, the later events moved up one row."""
    for number in range(LAST, 4, -1):
        events[position(number + 1)] = events[position(number)]
    events[position(5)] = {
        **events[position(4)],
        "seq": 5,
        "prev": event_digest(events[position(4)]),
    }


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (set_payload, "event 5 does not follow event 4"),
        (set_last_payload, f"event {LAST} is not the event the run's state recorded last"),
        (drop_one, "event 5 is numbered 6"),
        (drop_last, f"event {LAST - 1} is not the event the run's state recorded last"),
        (insert_one, "event 6 is numbered 5"),
    ],
)
def test_an_edited_ledger_fails_verification_where_it_breaks(finished, tmp_path, edit, said):
    edit_store(finished, "t", EVENTS, edit)
    assert_verification_fails(finished, tmp_path, said)


def test_an_event_added_after_the_last_one_is_found_by_the_cursor(finished, tmp_path):
    """Chained onto the last event: past the run's cursor it is not part of the ledger (never
    shown, never verified as the run's); moving the cursor to take it in is an edit of the
    cursor, which the run did not write."""
    added: dict[str, Any] = {}

    def add_one(events: Rows) -> None:
        last = events[position(LAST)]
        added.update({**last, "seq": LAST + 1, "prev": event_digest(last)})
        events[position(LAST + 1)] = added

    edit_store(finished, "t", EVENTS, add_one)
    assert len(shown(finished, tmp_path)) == LAST
    passed = verify(finished, tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert f"{LAST} events, chain intact" in passed.stdout

    edit_latest_cursor(
        finished, "t", lambda cursor: cursor.update(events=LAST + 1, head=event_digest(added))
    )
    result = verify(finished, tmp_path)
    assert result.returncode == 1
    assert "the run's cursor" in result.stderr and "was not written by this run" in result.stderr
    assert result.stderr.count("\n") == 1


def set_summary(receipts: Rows) -> None:
    receipts["E2"]["summary"] = "FORGED"


def replace_receipt(receipts: Rows) -> None:
    """E1's row holding E2: a receipt the run sealed, but not the one its E1 event recorded."""
    receipts["E1"] = receipts["E2"]


def drop_receipt(receipts: Rows) -> None:
    del receipts["E3"]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (set_summary, "receipt E2 was not written by this run"),
        (replace_receipt, "receipt E1 is not the one event 5 recorded"),
        (drop_receipt, "receipt E3 is not the one event 13 recorded"),
    ],
)
def test_an_edited_receipt_fails_verification(finished, tmp_path, edit, said):
    edit_store(finished, "t", EVIDENCE, edit)
    assert_verification_fails(finished, tmp_path, said)


@pytest.mark.slow  # a real process killed mid-run (kill -9), as the slow suite's kill trials are
def test_the_chain_holds_across_a_crash_and_a_resume(tmp_path):
    db = tmp_path / "crash.sqlite"
    process = start_paused(
        "run", "R42", "--db", str(db), "--thread", "t", point="after:execute@c2", cwd=tmp_path
    )
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
    first = {"seq": 1, "prev": None, "type": "admitted"}
    second = {"seq": 2, "prev": event_digest(first), "type": "stopped"}
    assert chain_break([first, second], event_digest(second)) is None
    assert chain_break([first], event_digest(second)) == (
        "event 1 is not the event the run's state recorded last (its digest differs)"
    )
