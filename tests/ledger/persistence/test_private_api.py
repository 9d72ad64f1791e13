"""The private members of LangGraph's savers and stores Warrant relies on (ledger/persistence/
private_api.py): each one's signature is the one the adapter calls (tests/private_members.py, in
this environment and in the `[serve]` extra's), and each call does, for real, what the adapter
says it relies on: on a SQLite file and on a PostgreSQL database of the test's own."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import PutOp
from langgraph.store.postgres import PostgresStore
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg.rows import dict_row

from ledger.persistence.private_api import (
    HookedAsyncPostgresSaver,
    HookedPostgresSaver,
    HookedSqliteSaver,
    aqueue_puts,
    queue_puts,
    store_transaction,
    write_puts,
)
from tests.private_members import RELIED, Member, change, changes

ROOT = Path(__file__).resolve().parents[3]
SERVE_PYTHON = Path(os.environ.get("WARRANT_SERVE_PYTHON", ROOT / ".venv-serve" / "bin" / "python"))
SPACE = ("warrant", "runs", "t1", "events")
PUTS = [
    PutOp(SPACE, "0000000001", {"n": 1}, index=False),
    PutOp(SPACE, "0000000002", {"n": 2}, index=False),
    PutOp(SPACE, "0000000001", None),  # a delete after its put, in one batch
]
EXPECTED = {"0000000002": {"n": 2}}
"""What `PUTS` leaves, by hand: the first key put then deleted, the second put."""


def test_every_relied_on_member_has_the_signature_the_adapter_calls():
    assert changes() == []


def test_a_changed_member_is_named_with_its_package_and_version():
    """The check itself can fail: a member as an older adapter would have called it."""
    member = RELIED[0]
    changed = change(member._replace(signature="(self, put_ops)"))
    assert changed is not None
    assert changed.startswith("langgraph-checkpoint-postgres 3.")
    assert "PostgresStore._batch_put_ops is now function (self, put_ops, cur)" in changed
    gone = change(Member(member.distribution, member.owner, "_batch_gone", "function", "(self)"))
    assert gone is not None and "PostgresStore._batch_gone is gone" in gone


@pytest.mark.slow
def test_the_serve_extras_release_has_the_same_members():
    """The `[serve]` extra pins its own PostgreSQL saver (langgraph-runtime-pg): the same check,
    run in its environment."""
    if not SERVE_PYTHON.exists():
        pytest.fail(
            f"the server's environment is missing ({SERVE_PYTHON}): "
            "python3 -m venv .venv-serve && .venv-serve/bin/pip install -e '.[serve]'"
        )
    checked = subprocess.run(
        [str(SERVE_PYTHON), "-m", "tests.private_members"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (checked.returncode, checked.stdout.strip()) == (0, "no change"), checked.stderr


# The calls, for real.


def stored_pg(url: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT prefix, key, value FROM store ORDER BY key").fetchall()
    assert all(prefix == ".".join(SPACE) for prefix, _, _ in rows)
    return {key: value for _, key, value in rows}


def stored_sqlite(path: Path) -> dict[str, Any]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT prefix, key, value FROM store ORDER BY key").fetchall()
    assert all(prefix == ".".join(SPACE) for prefix, _, _ in rows)
    return {key: json.loads(value) for _, key, value in rows}


def test_queue_puts_runs_the_stores_upserts_on_the_callers_pipeline(postgres_url):
    with psycopg.connect(postgres_url, autocommit=True, row_factory=dict_row) as conn:
        store = PostgresStore(conn)
        store.setup()
        with conn.pipeline(), conn.cursor() as cur:
            queue_puts(store, PUTS, cur)
            assert stored_pg(postgres_url) == {}  # queued in the pipeline, not yet sent
    assert stored_pg(postgres_url) == EXPECTED


def test_aqueue_puts_runs_the_async_stores_upserts_on_the_callers_cursor(postgres_url):
    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(
            postgres_url, autocommit=True, row_factory=dict_row
        ) as conn:
            store = AsyncPostgresStore(conn)
            await store.setup()
            async with conn.transaction(), conn.cursor() as cur:
                await aqueue_puts(store, PUTS, cur)
                assert stored_pg(postgres_url) == {}  # not committed yet

    asyncio.run(scenario())
    assert stored_pg(postgres_url) == EXPECTED


@contextmanager
def sqlite_store(path: Path) -> Iterator[SqliteStore]:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        store = SqliteStore(conn)
        store.setup()
        yield store
    finally:
        conn.close()


def test_write_puts_writes_the_stores_rows_in_another_connections_transaction(tmp_path):
    path = tmp_path / "w.sqlite"
    with sqlite_store(path):
        other = sqlite3.connect(path)
        try:
            cur = other.cursor()
            with sqlite_store(path) as store:
                write_puts(store, PUTS, cur)
            other.rollback()  # the writes were the other connection's, in its transaction
            assert stored_sqlite(path) == {}
            write_puts(SqliteStore(other), PUTS, cur)
            other.commit()
        finally:
            other.close()
    assert stored_sqlite(path) == EXPECTED


def test_store_transaction_commits_what_its_cursor_wrote_when_it_exits(tmp_path):
    path = tmp_path / "w.sqlite"
    with sqlite_store(path) as store:
        with store_transaction(store) as cur:
            write_puts(store, PUTS, cur)
            assert store.conn.in_transaction
            assert stored_sqlite(path) == {}
        assert not store.conn.in_transaction
    assert stored_sqlite(path) == EXPECTED


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


def written(saver: Any) -> dict[str, list[bool]]:
    """How `saver` (its `opened` list filled by `statement_cursor`) opened its cursors for a put,
    its task's writes and a read."""
    marks = {}
    saver.opened.clear()
    stored = saver.put(config("t1"), empty_checkpoint(), {"step": 0}, {})
    marks["put"], saver.opened[:] = list(saver.opened), []
    saver.put_writes(stored, [("x", 1)], "task")
    marks["put_writes"], saver.opened[:] = list(saver.opened), []
    assert saver.get_tuple(config("t1")).pending_writes == [("task", "x", 1)]
    marks["get_tuple"] = list(saver.opened)
    return marks


def test_the_postgres_savers_writes_open_their_cursor_through_the_hook_in_a_pipeline(postgres_url):
    class Recording(HookedPostgresSaver):
        opened: list[bool] = []

        @contextmanager
        def statement_cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
            self.opened.append(pipeline)
            with super().statement_cursor(pipeline=pipeline) as cur:
                yield cur

    with Recording.from_conn_string(postgres_url) as saver:
        saver.setup()
        assert written(saver) == {"put": [True], "put_writes": [True], "get_tuple": [False]}


def test_the_async_postgres_savers_writes_open_their_cursor_through_the_hook(postgres_url):
    from contextlib import asynccontextmanager

    class Recording(HookedAsyncPostgresSaver):
        opened: list[bool] = []

        @asynccontextmanager
        async def statement_cursor(self, *, pipeline: bool = False) -> Any:
            self.opened.append(pipeline)
            async with super().statement_cursor(pipeline=pipeline) as cur:
                yield cur

    async def scenario() -> dict[str, list[bool]]:
        async with Recording.from_conn_string(postgres_url) as saver:
            await saver.setup()
            saver.opened.clear()
            stored = await saver.aput(config("t1"), empty_checkpoint(), {"step": 0}, {})
            put, saver.opened[:] = list(saver.opened), []
            await saver.aput_writes(stored, [("x", 1)], "task")
            put_writes, saver.opened[:] = list(saver.opened), []
            found = await saver.aget_tuple(config("t1"))
            assert found is not None and found.pending_writes == [("task", "x", 1)]
            return {"put": put, "put_writes": put_writes, "get_tuple": list(saver.opened)}

    assert asyncio.run(scenario()) == {"put": [True], "put_writes": [True], "get_tuple": [False]}


def test_the_sqlite_savers_writes_open_their_cursor_through_the_hook_in_a_transaction(tmp_path):
    class Recording(HookedSqliteSaver):
        opened: list[bool] = []

        @contextmanager
        def statement_cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
            self.opened.append(transaction)
            with super().statement_cursor(transaction=transaction) as cur:
                yield cur

    conn = sqlite3.connect(tmp_path / "w.sqlite", check_same_thread=False)
    try:
        saver = Recording(conn)
        saver.setup()
        marks = written(saver)
    finally:
        conn.close()
    assert marks == {"put": [True], "put_writes": [True], "get_tuple": [False]}
