"""The server's store: a node's calls on a synchronous pool of their own, from the node's thread;
a step's record handed over and sent by the server's saver in its next write for the run's thread,
read back until then."""

from __future__ import annotations

import asyncio

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.store.base import GetOp, PutOp, SearchOp
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from ledger.intents import intend
from ledger.persistence.pg_saver import WarrantPostgresSaver
from ledger.persistence.served_store import WAITING, ServedStore
from ledger.staged import StagedWrites

KWARGS = {"autocommit": True, "prepare_threshold": None, "row_factory": dict_row}


def in_database(url: str, namespace: tuple[str, ...], key: str) -> object:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT value FROM store WHERE prefix = %s AND key = %s", (".".join(namespace), key)
        ).fetchone()
    return row[0] if row else None


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": "c1"}}


def test_a_steps_record_goes_with_the_threads_next_write_and_is_read_back_meanwhile(postgres_url):
    space = ("warrant", "runs", "t1", "events")

    async def scenario() -> None:
        async with AsyncConnectionPool(postgres_url, kwargs=KWARGS, open=False) as pool:
            with ConnectionPool(postgres_url, kwargs=KWARGS) as sync_pool:
                saver = WarrantPostgresSaver(pool)
                await saver.setup()
                store = ServedStore(pool, sync_pool)
                await store.setup()

                def step() -> object:  # as a node does, in a worker thread
                    staged = StagedWrites(store, clock=lambda: 1_700_000_000.0, scope="t1")
                    staged.batch([PutOp(space, "0000000001", {"n": 1}, index=False)])
                    staged.flush()
                    return store.batch([GetOp(space, "0000000001")])[0]

                item = await asyncio.to_thread(step)
                assert item is not None and item.value == {"n": 1}  # read back
                assert in_database(postgres_url, space, "0000000001") is None
                await saver.aput_writes(config("t2"), [("x", 1)], "task")  # another thread's
                assert in_database(postgres_url, space, "0000000001") is None
                await saver.aput(config("t1"), empty_checkpoint(), {"step": 0}, {})
                assert in_database(postgres_url, space, "0000000001") == {"n": 1}
                assert not WAITING.pending("t1")  # sent, no longer waiting

                def search_after_a_step() -> list:
                    staged = StagedWrites(store, clock=lambda: 1_700_000_000.0, scope="t1")
                    staged.batch([PutOp(space, "0000000002", {"n": 2}, index=False)])
                    staged.flush()
                    return store.batch([SearchOp(space)])[0]

                found = await asyncio.to_thread(search_after_a_step)  # a search sees what waits
                assert sorted(item.key for item in found) == ["0000000001", "0000000002"]
                assert not WAITING.pending("t1")

    asyncio.run(scenario())


def test_a_calls_intent_is_counted_in_one_statement_from_the_nodes_thread(postgres_url):
    async def scenario() -> list[int]:
        async with AsyncConnectionPool(postgres_url, kwargs=KWARGS, open=False) as pool:
            with ConnectionPool(postgres_url, kwargs=KWARGS) as sync_pool:
                store = ServedStore(pool, sync_pool)
                await store.setup()
                return await asyncio.to_thread(
                    lambda: [intend(store, "t1", "c1", 1.0) for _ in range(3)]
                )

    assert asyncio.run(scenario()) == [1, 2, 3]
