"""A call's intent counts its attempts: each start of the call's tool adds one, a crash between
the count's read and its write adds none, and a count the run did not write says the call may
have run. A leased run's store (PostgreSQL, SQLite) counts in one statement (`count_attempt`), the
same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from ledger.intents import intend
from ledger.persistence.lease import LeaseStore
from ledger.persistence.savers import open_run, postgres_lease, postgres_pool, sqlite_store
from ledger.persistence.sqlite_lease import SqliteRecordStore
from ledger.store import INTENTS, space


@pytest.fixture(params=["memory", "sqlite", "sqlite lease", "postgres"])
def store(request, tmp_path: Path):
    if request.param == "memory":
        yield InMemoryStore()
    elif request.param == "sqlite":  # read, then written: the general way
        with sqlite_store(tmp_path / "runs.sqlite") as opened:
            yield opened
    elif request.param == "sqlite lease":
        with open_run(str(tmp_path / "runs.sqlite"), "intents") as storage:
            assert isinstance(storage.store, SqliteRecordStore)  # the one-statement count
            yield storage.store
    else:
        url = request.getfixturevalue("postgres_url")
        with postgres_pool(url) as pool, postgres_lease(pool, "intents") as storage:
            assert isinstance(storage.store, LeaseStore)  # the one-statement count is tested
            yield storage.store


def test_each_start_of_a_call_is_one_more_attempt(store):
    assert [intend(store, "t1", "c1", 1.0) for _ in range(3)] == [1, 2, 3]
    assert intend(store, "t1", "c2", 2.0) == 1  # another call counts its own
    assert intend(store, "t2", "c1", 3.0) == 1  # another run's call of the same id too


def test_a_run_keeps_its_intents_under_one_namespace(store):
    for n in range(50):
        intend(store, "t1", f"c{n}", 1.0)
    assert store.list_namespaces(prefix=space("t1", INTENTS)) == [space("t1", INTENTS)]
    assert len(store.search(space("t1", INTENTS), limit=100)) == 50


@pytest.mark.parametrize("count", ["2", True, -4, 0, None, 2.0])
def test_a_count_the_run_did_not_write_says_the_call_may_have_run(store, count):
    intend(store, "t1", "c1", 1.0)
    (item,) = store.search(space("t1", INTENTS))
    store.batch([PutOp(space("t1", INTENTS), item.key, {**item.value, "attempts": count})])
    assert intend(store, "t1", "c1", 2.0) == 2
