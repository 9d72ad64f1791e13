"""On PostgreSQL a step's record goes to the database in its checkpoint's round trip: handed over
by the step, read back in this process until it is sent, sent first in the saver's next pipelined
write, and sent when the lease ends if no write came."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import GetOp, PutOp, SearchOp
from psycopg.types.json import Jsonb

from ledger.persistence.lease import LeaseSaver, LeaseStore
from ledger.persistence.savers import Storage, postgres_lease, postgres_pool
from ledger.staged import StagedWrites

SPACE = ("warrant", "runs", "t1", "events")


@pytest.fixture
def lease(postgres_url: str) -> Iterator[tuple[Storage, str]]:
    with postgres_pool(postgres_url) as pool, postgres_lease(pool, "t1") as storage:
        yield storage, postgres_url


def in_database(url: str, key: str) -> object:
    """The item's value as another session sees it (committed rows only)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT value FROM store WHERE prefix = %s AND key = %s", (".".join(SPACE), key)
        ).fetchone()
    return row[0] if row else None


def staged_step(store: LeaseStore, key: str, value: dict) -> None:
    staged = StagedWrites(store, clock=lambda: 1_700_000_000.0)
    staged.batch([PutOp(SPACE, key, value, index=False)])
    staged.flush()


def test_a_steps_record_waits_for_the_checkpoints_write_and_is_read_back_meanwhile(lease):
    (storage, url) = lease
    assert isinstance(storage.saver, LeaseSaver) and isinstance(storage.store, LeaseStore)
    staged_step(storage.store, "0000000001", {"kind": "admitted"})
    assert in_database(url, "0000000001") is None  # no round trip of its own
    (item,) = storage.store.batch([GetOp(SPACE, "0000000001")])
    assert item is not None and item.value == {"kind": "admitted"}
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": "", "checkpoint_id": "x"}}
    storage.saver.put(config, empty_checkpoint(), {"source": "loop", "step": 0}, {})
    assert in_database(url, "0000000001") == {"kind": "admitted"}  # sent with the checkpoint


def test_a_write_of_the_store_itself_goes_after_what_waits(lease):
    (storage, url) = lease
    staged_step(storage.store, "0000000001", {"n": 1})
    storage.store.batch([PutOp(SPACE, "0000000002", {"n": 2}, index=False)])
    assert in_database(url, "0000000001") == {"n": 1} and in_database(url, "0000000002") == {"n": 2}


def test_a_search_sees_what_waits(lease):
    (storage, _) = lease
    staged_step(storage.store, "0000000001", {"n": 1})
    (found,) = storage.store.batch([SearchOp(SPACE)])
    assert [item.value for item in found] == [{"n": 1}]


def test_the_lease_end_sends_what_waits(postgres_url):
    with postgres_pool(postgres_url) as pool, postgres_lease(pool, "t1") as storage:
        staged_step(storage.store, "0000000001", {"n": 1})
        assert in_database(postgres_url, "0000000001") is None
    assert in_database(postgres_url, "0000000001") == {"n": 1}


def test_a_lease_left_by_an_error_sends_nothing_of_a_step_whose_checkpoint_was_not_written(
    postgres_url,
):
    """The step runs again from its last checkpoint and writes the same keys: its record is
    never in the database without the state that points to it."""
    with (
        pytest.raises(RuntimeError),
        postgres_pool(postgres_url) as pool,
        postgres_lease(pool, "t1") as storage,
    ):
        staged_step(storage.store, "0000000001", {"n": 1})
        raise RuntimeError("the process stops here")
    assert in_database(postgres_url, "0000000001") is None


CONTROL = ("warrant", "runs", "t1", "control")


def test_the_control_items_ride_back_with_each_pipelined_write(lease):
    """Another process's stop, read in the checkpoint's round trip: the guard's read of it is
    answered from there until the step writes its record; then it is read again."""
    (storage, url) = lease
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": "", "checkpoint_id": "x"}}
    with psycopg.connect(url, autocommit=True) as other:  # `warrant stop` in another process
        other.execute(
            "INSERT INTO store (prefix, key, value) VALUES (%s, 'stop', %s)",
            (".".join(CONTROL), Jsonb({"by": "alice", "at": 1.0, "reason": ""})),
        )
        storage.saver.put(config, empty_checkpoint(), {"source": "loop", "step": 0}, {})
        other.execute("DELETE FROM store WHERE prefix = %s", (".".join(CONTROL),))
    stop, correction = storage.store.batch([GetOp(CONTROL, "stop"), GetOp(CONTROL, "correction-1")])
    assert stop is not None and stop.value["by"] == "alice"  # as the write's read found it
    assert correction is None
    staged_step(storage.store, "0000000001", {"n": 1})  # the step's record: the read is old now
    (again,) = storage.store.batch([GetOp(CONTROL, "stop")])
    assert again is None  # read from the database: the stop is gone there
