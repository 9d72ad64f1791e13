"""The server's PostgreSQL saver deletes what the LangGraph server asks it to, on a real server:
a run's checkpoints (rollback), a thread's history but its latest checkpoint (prune), a thread."""

from __future__ import annotations

import asyncio
import operator
import uuid
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from ledger.persistence.pg_saver import WarrantPostgresSaver


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]  # a blob per version


def noted(state: Notes) -> dict[str, Any]:
    return {"notes": [f"note {len(state['notes']) + 1}"]}


def asked(state: Notes) -> dict[str, Any]:
    return {"notes": [interrupt("which?")]}


def graph(saver: WarrantPostgresSaver, ask: bool = False) -> Any:
    builder = StateGraph(Notes)
    builder.add_node("note", noted)
    builder.add_edge(START, "note")
    if ask:
        builder.add_node("ask", asked)
        builder.add_edge("note", "ask")
        builder.add_edge("ask", END)
    else:
        builder.add_edge("note", END)
    return builder.compile(checkpointer=saver)


def config(thread: str) -> dict[str, Any]:
    """A run's configuration as the server gives it: the run's id in its metadata."""
    return {"configurable": {"thread_id": thread}, "metadata": {"run_id": str(uuid.uuid4())}}


def orphans(url: str) -> tuple[int, int]:
    """Writes without their checkpoint, blobs no checkpoint names."""
    with psycopg.connect(url) as conn:
        writes = conn.execute(
            "SELECT count(*) FROM checkpoint_writes w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c"
            " WHERE (c.thread_id, c.checkpoint_ns, c.checkpoint_id)"
            " = (w.thread_id, w.checkpoint_ns, w.checkpoint_id))"
        ).fetchone()
        blobs = conn.execute(
            "SELECT count(*) FROM checkpoint_blobs b WHERE NOT EXISTS (SELECT 1 FROM checkpoints c"
            " WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns"
            " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)"
        ).fetchone()
    assert writes is not None and blobs is not None
    return writes[0], blobs[0]


def rows(url: str, thread: str) -> int:
    with psycopg.connect(url) as conn:
        found = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,))
        return found.fetchone()[0]  # type: ignore[index]


def test_a_rolled_back_run_leaves_the_thread_as_the_run_before_it_left_it(postgres_url):
    async def scenario() -> None:
        async with WarrantPostgresSaver.from_conn_string(postgres_url) as saver:
            await saver.setup()
            notes = graph(saver)
            first, second, other = config("t"), config("t"), config("u")
            await notes.ainvoke({"notes": []}, first)
            await notes.ainvoke({"notes": []}, other)
            await notes.ainvoke({"notes": []}, second)
            assert (await notes.aget_state(second)).values["notes"] == ["note 1", "note 2"]
            before_u = rows(postgres_url, "u")

            await saver.adelete_for_runs([second["metadata"]["run_id"]])

            assert (await notes.aget_state(first)).values["notes"] == ["note 1"]
            assert rows(postgres_url, "u") == before_u
            assert orphans(postgres_url) == (0, 0)
            await notes.ainvoke({"notes": []}, config("t"))  # the thread goes on from there
            assert (await notes.aget_state(first)).values["notes"] == ["note 1", "note 2"]
            await saver.adelete_for_runs([])

    asyncio.run(scenario())


def test_pruning_keeps_each_threads_latest_checkpoint_and_its_pending_question(postgres_url):
    async def scenario() -> None:
        async with WarrantPostgresSaver.from_conn_string(postgres_url) as saver:
            await saver.setup()
            notes, asking = graph(saver), graph(saver, ask=True)
            for _ in range(3):
                await notes.ainvoke({"notes": []}, config("t"))
            await asking.ainvoke({"notes": []}, config("q"))  # waits at its question
            kept = (await notes.aget_state(config("t"))).values
            assert rows(postgres_url, "t") > 1

            await saver.aprune(["t", "q"], strategy="keep_latest")

            assert rows(postgres_url, "t") == 1 and rows(postgres_url, "q") == 1
            assert (await notes.aget_state(config("t"))).values == kept
            assert orphans(postgres_url) == (0, 0)
            answered = await asking.ainvoke(Command(resume="this one"), config("q"))
            assert answered["notes"] == ["note 1", "this one"]

            await saver.aprune(["t"], strategy="delete")
            assert rows(postgres_url, "t") == 0 and rows(postgres_url, "q") > 0

    asyncio.run(scenario())


def test_pruning_refuses_what_it_does_not_know(postgres_url):
    async def scenario() -> None:
        async with WarrantPostgresSaver.from_conn_string(postgres_url) as saver:
            with pytest.raises(ValueError, match="unknown prune strategy 'keep_some'"):
                await saver.aprune(["t"], strategy="keep_some")
            with pytest.raises(TypeError, match="not a str"):
                await saver.aprune("t")

    asyncio.run(scenario())
