"""The retention hooks the LangGraph server asks of a checkpointer (`aprune`, `adelete_for_runs`),
on the server's own savers (graph/server/graphs.py) over a SQLite file and a PostgreSQL database,
and the command line's `prune` through the same code: what stays is exactly what the rows written
say should (each namespace's latest checkpoint, found from the parent links, with its writes and
the blobs it names), the store's record of every run is never touched, and a pruned run still reads
its handover and resumes from its question."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from graph.build import compile_graph
from graph.runs.interactions import resume_command
from ledger.persistence.locations import is_postgres
from ledger.persistence.retention import prune
from ledger.persistence.savers import open_saver
from tests.helpers import call, recorded, stop, write_manifest

Key = tuple[str, str, str]
"""A checkpoint's (thread, namespace, id)."""


@dataclass(frozen=True)
class Tables:
    """The checkpoint tables and the store as rows, read with plain SQL."""

    checkpoints: dict[Key, dict[str, Any]]
    """Each checkpoint's parent id, metadata and channel versions."""
    writes: frozenset[tuple[Any, ...]]
    blobs: frozenset[tuple[str, str, str, str]]
    """(thread, namespace, channel, version); PostgreSQL only."""
    store: tuple[tuple[Any, ...], ...]


def tables(db: str) -> Tables:
    if is_postgres(db):
        with psycopg.connect(db) as conn:
            found = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata,"
                " checkpoint -> 'channel_versions' FROM checkpoints"
            ).fetchall()
            writes = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx FROM checkpoint_writes"
            ).fetchall()
            blobs = conn.execute(
                "SELECT thread_id, checkpoint_ns, channel, version FROM checkpoint_blobs"
            ).fetchall()
            store = conn.execute("SELECT prefix, key, value FROM store ORDER BY prefix, key")
            rows = tuple(tuple(row) for row in store.fetchall())
    else:
        with sqlite3.connect(db) as conn:
            found = [
                (*row[:4], json.loads(row[4]), {})
                for row in conn.execute(
                    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata"
                    " FROM checkpoints"
                )
            ]
            writes = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx FROM writes"
            ).fetchall()
            blobs = []
            rows = tuple(conn.execute("SELECT prefix, key, value FROM store ORDER BY prefix, key"))
    checkpoints = {
        (thread, ns, cid): {"parent": parent, "metadata": metadata, "versions": versions or {}}
        for thread, ns, cid, parent, metadata, versions in found
    }
    return Tables(checkpoints, frozenset(map(tuple, writes)), frozenset(map(tuple, blobs)), rows)


def leaves(before: Tables, threads: set[str]) -> set[Key]:
    """Each namespace's latest checkpoint of `threads`: the one no other names as its parent."""
    parents = {(key[0], key[1], row["parent"]) for key, row in before.checkpoints.items()}
    return {key for key in before.checkpoints if key[0] in threads and key not in parents}


def expected(before: Tables, kept: set[Key]) -> Tables:
    """What remains when only `kept` remain of the checkpoints: their writes, of the blobs of the
    threads that lost any those a remaining checkpoint names, and no link to a parent gone."""
    touched = {key[0] for key in before.checkpoints if key not in kept}
    named = {
        (key[0], key[1], channel, str(version))
        for key in kept
        for channel, version in before.checkpoints[key]["versions"].items()
    }
    return Tables(
        {
            key: row | {"parent": row["parent"] if (*key[:2], row["parent"]) in kept else None}
            for key, row in before.checkpoints.items()
            if key in kept
        },
        frozenset(write for write in before.writes if write[:3] in kept),
        frozenset(blob for blob in before.blobs if blob[0] not in touched or blob in named),
        before.store,
    )


def config(thread: str, run: str) -> dict[str, Any]:
    """A run's configuration as the server gives it: the run's id in its metadata."""
    return {"configurable": {"thread_id": thread}, "metadata": {"run_id": run}}


@pytest.fixture
def gated(scenario_dir: Path, action_file: Any) -> dict[str, str]:
    """A run's input that stops at a person's approval of its one search, then ends citing it."""
    manifest = write_manifest(scenario_dir)
    text = manifest.read_text().replace(
        'path = "logs/t.log"', 'path = "logs/t.log"\napproval = "human"'
    )
    manifest.write_text(text)
    search = call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR")
    ending = stop("overflow", hypotheses=[{"statement": "FIFO overflow", "refs": ["E1"]}])
    return {"scenario": str(manifest), "chooser": action_file([search, ending])}


def run(db: str, thread: str, run_id: str, given: Any) -> dict[str, Any]:
    """`given` (an input or a resume) on the thread, as the command line runs it; its state."""
    with open_saver(db) as storage:
        graph = compile_graph(*storage)
        graph.invoke(given, config(thread, run_id), durability="sync")
        return recorded(graph, config(thread, run_id))


def approved(db: str, thread: str, run_id: str) -> dict[str, Any]:
    with open_saver(db) as storage:
        snapshot = compile_graph(*storage).get_state(config(thread, run_id))
    return run(
        db, thread, run_id, resume_command(snapshot, lambda kind: {"decision": "approve"}, None)
    )


def outcome(state: dict[str, Any]) -> tuple[Any, ...]:
    """What a run ended with, apart from its thread and times."""
    handover = state["handover"]
    return (
        state["status"],
        handover["hypotheses"],
        [item["ref"] for item in state["evidence"]],
        [event["type"] for event in state["events"]],
    )


@pytest.fixture
def server_saver(db: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The server's checkpointer on `db` (graph/server/graphs.py, as `langgraph dev` opens it),
    with a function that runs one of its coroutines."""
    monkeypatch.setenv("WARRANT_DB", db)
    monkeypatch.delenv("LANGGRAPH_RUNTIME_EDITION", raising=False)
    from graph.server.graphs import checkpointer

    def call_hook(name: str, *args: Any, **kwargs: Any) -> None:
        async def hook() -> None:
            async with checkpointer() as saver:
                await getattr(saver, name)(*args, **kwargs)

        asyncio.run(hook())

    yield call_hook


def pruned_by(how: str, db: str, server_saver: Any, threads: list[str]) -> None:
    """Each thread reduced to its latest checkpoint: by the server's `aprune`, or by `warrant
    prune --keep-latest`'s retention."""
    if how == "server":
        server_saver("aprune", threads, strategy="keep_latest")
        return
    with open_saver(db) as storage:
        report = prune(storage, keep_latest=True, older_than_days=None, now=time.time())
    assert sorted(report.pruned) == sorted(threads) and report.deleted == []


@pytest.mark.parametrize("how", ["server", "command line"])
def test_keep_latest_leaves_each_runs_latest_checkpoint_and_the_run_goes_on(
    db, gated, server_saver, how
):
    done = run(db, "done", "r1", {"scenario": "R42"})
    run(db, "asks", "r2", gated)
    run(db, "control", "r3", gated)  # the same run, never pruned
    before = tables(db)
    assert len(before.checkpoints) > 3 * 2 and before.writes  # a history to prune
    pruned = ["done", "asks"] if how == "server" else ["done", "asks", "control"]

    pruned_by(how, db, server_saver, pruned)

    kept = leaves(before, set(pruned)) | {k for k in before.checkpoints if k[0] not in pruned}
    assert tables(db) == expected(before, kept)
    assert {key[0] for key in kept} == {"done", "asks", "control"}
    with open_saver(db) as storage:
        again = recorded(compile_graph(*storage), config("done", "r1"))
    assert again["handover"] == done["handover"] and outcome(again) == outcome(done)
    resumed, control = approved(db, "asks", "r4"), approved(db, "control", "r5")
    assert resumed["status"] == "stopped" and outcome(resumed) == outcome(control)


def test_delete_leaves_no_checkpoint_of_the_threads_and_keeps_their_record(db, server_saver):
    done = run(db, "done", "r1", {"scenario": "R42"})
    run(db, "other", "r2", {"scenario": "R42"})
    before = tables(db)

    server_saver("aprune", ["done"], strategy="delete")

    kept = {key for key in before.checkpoints if key[0] != "done"}
    after = tables(db)
    assert after == expected(before, kept)
    assert not any(blob[0] == "done" for blob in after.blobs)
    ledger = [row for row in after.store if row[0] == "warrant.runs.done.events"]
    assert len(ledger) == len(done["events"]) > 0  # the run's ledger, still whole


def test_deleting_a_run_leaves_the_threads_checkpoints_as_the_run_before_left_them(
    db, gated, server_saver
):
    run(db, "asks", "r1", gated)
    waiting = tables(db)
    approved(db, "asks", "r2")
    run(db, "other", "r3", {"scenario": "R42"})
    before = tables(db)
    assert {row["metadata"].get("run_id") for row in before.checkpoints.values()} == {
        "r1",
        "r2",
        "r3",
    }

    server_saver("adelete_for_runs", ["r2"])

    kept = {key for key, row in before.checkpoints.items() if row["metadata"]["run_id"] != "r2"}
    after = tables(db)
    assert after == expected(before, kept)
    assert set(after.checkpoints) == set(waiting.checkpoints) | {
        key for key in before.checkpoints if key[0] == "other"
    }
    with open_saver(db) as storage:
        snapshot = compile_graph(*storage).get_state(config("asks", "r1"))
    assert snapshot.config["configurable"]["checkpoint_id"] in {
        key[2] for key in leaves(waiting, {"asks"})
    }
    server_saver("adelete_for_runs", [])
    assert tables(db) == after


def test_the_hooks_refuse_what_they_do_not_know(db, server_saver):
    with pytest.raises(ValueError, match="unknown prune strategy 'keep_some'"):
        server_saver("aprune", ["t"], strategy="keep_some")
    with pytest.raises(TypeError, match="not a str"):
        server_saver("aprune", "t")


def test_no_graph_warrant_serves_holds_a_delta_channel():
    """`keep_latest` drops the older checkpoints a `DeltaChannel`'s value is rebuilt from."""
    from langgraph.channels.delta import DeltaChannel

    from graph.server.memory_graph import compile_memory

    graphs = [compile_graph(), compile_graph(served=True), compile_memory()]
    graphs += [sub for graph in graphs for _, sub in graph.get_subgraphs(recurse=True)]
    kinds = {type(channel) for graph in graphs for channel in graph.channels.values()}
    assert len(kinds) > 1 and DeltaChannel not in kinds
