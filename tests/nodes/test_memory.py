"""Memory as history: versioned notes with receipts, a forget that is durable across a crash on
PostgreSQL and wins over anything later, recall that never returns a forgotten note, and the
`warrant memory` commands."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langgraph.store.memory import InMemoryStore

from ledger.persistence.savers import open_saver
from nodes import memory
from nodes.memory import NoteError, Scope
from tests.cli_process import warrant

ROOT = Path(__file__).resolve().parents[2]
LAB = Scope("lab")
NOTE = "RST_CHK clk_en late after release: seen in R38, R40-R42; tracked as BUG-1234"


def test_every_change_is_a_version_with_who_when_and_what_it_replaced():
    store = InMemoryStore()
    first = memory.save(store, LAB, NOTE, "alice", 10.0, signature="RST_CHK clk_en late")
    second = memory.correct(
        store, LAB, first["id"], NOTE.replace("R40-R42", "R40-R42, R44"), "bob", 20.0
    )
    assert (second["version"], second["by"]) == (2, "bob")
    receipts = memory.history(store, LAB, first["id"])
    assert [(r["version"], r["op"], r["by"], r["at"]) for r in receipts] == [
        (1, "save", "alice", 10.0),
        (2, "correct", "bob", 20.0),
    ]
    assert receipts[1]["previous"] == first["sha256"] and receipts[0]["text"] == NOTE
    assert memory.notes(store, LAB) == [second]
    assert memory.notes(store, Scope("other")) == []  # projects are apart


def test_a_forgotten_note_is_never_recalled_and_cannot_come_back():
    store = InMemoryStore()
    note = memory.save(store, LAB, NOTE, "alice", 10.0, signature="RST_CHK clk_en late")
    assert [n["id"] for n in memory.recall(store, [LAB], "clk_en late")] == [note["id"]]
    memory.forget(store, LAB, note["id"], "alice", 30.0)
    assert memory.recall(store, [LAB], "clk_en late") == [] and memory.notes(store, LAB) == []
    assert all(r["text"] is None for r in memory.history(store, LAB, note["id"]))
    with pytest.raises(NoteError, match="was forgotten"):
        memory.correct(store, LAB, note["id"], "it was fine after all", "mallory", 40.0)
    assert memory.forget(store, LAB, note["id"], "alice", 50.0)["version"] == 2  # once


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda store: memory.save(store, LAB, "   ", "a", 1.0), "needs text"),
        (lambda store: memory.save(store, LAB, "x" * 4001, "a", 1.0), "at most 4000"),
        (lambda store: memory.correct(store, LAB, "../../etc", "x", "a", 1.0), "not a note id"),
        (lambda store: memory.forget(store, LAB, "m-00000000", "a", 1.0), "no note m-00000000"),
        (lambda store: memory.notes(store, Scope("a/b")), "is not a name"),
    ],
)
def test_bad_memory_input_is_one_clear_error(call, message):
    with pytest.raises(NoteError, match=message):
        call(InMemoryStore())


CRASH_AFTER_TOMBSTONE = textwrap.dedent("""\
    import os, signal, sys
    from ledger.persistence.savers import open_saver
    from nodes import memory
    def crash(*args):  # the tombstone is committed; the process dies before erasing the texts
        os.kill(os.getpid(), signal.SIGKILL)
    memory._erase_versions = crash
    with open_saver(sys.argv[1]) as storage:
        memory.forget(storage.store, memory.Scope("lab"), sys.argv[2], "alice", 30.0)
    """)


def test_forget_is_durable_across_a_crash_on_postgresql(postgres_url):
    with open_saver(postgres_url) as storage:
        note = memory.save(storage.store, LAB, NOTE, "alice", 10.0, signature="RST_CHK")
        memory.correct(storage.store, LAB, note["id"], NOTE + " (confirmed)", "bob", 20.0)
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH_AFTER_TOMBSTONE, postgres_url, note["id"]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert crashed.returncode == -9, crashed.stderr
    with open_saver(postgres_url) as storage:  # a new process's view of what was committed
        store = storage.store
        assert memory.recall(store, [LAB], "RST_CHK") == [] and memory.notes(store, LAB) == []
        with pytest.raises(NoteError, match="was forgotten"):  # a later change cannot undo it
            memory.correct(store, LAB, note["id"], "revived", "mallory", 40.0)
        receipts = memory.history(store, LAB, note["id"])  # finishes the erasure
        assert [r["op"] for r in receipts] == ["save", "correct", "forget"]
        assert all(r["text"] is None for r in receipts)
    with open_saver(postgres_url) as storage:
        versions = storage.store.search(LAB.versions(note["id"]))
        assert versions and all(item.value["text"] is None for item in versions)


def test_the_memory_commands(tmp_path):
    db = str(tmp_path / "w.sqlite")
    saved = warrant(
        "memory",
        "save",
        NOTE,
        "--signature",
        "RST_CHK clk_en late",
        "--project",
        "lab",
        "--as",
        "alice",
        "--db",
        db,
        "--json",
        cwd=tmp_path,
    )
    assert saved.returncode == 0, saved.stderr
    note_id = json.loads(saved.stdout)["id"]
    listed = warrant("memory", "list", "--project", "lab", "--db", db, cwd=tmp_path)
    assert note_id in listed.stdout and "alice" in listed.stdout
    found = warrant(
        "memory", "search", "clk_en LATE", "--project", "lab", "--db", db, "--json", cwd=tmp_path
    )
    assert [n["id"] for n in json.loads(found.stdout)] == [note_id]
    missed = warrant(
        "memory", "search", "clk_en early", "--project", "lab", "--db", db, cwd=tmp_path
    )
    assert missed.returncode == 0 and "No notes." in missed.stdout
    forgot = warrant("memory", "forget", note_id, "--project", "lab", "--db", db, cwd=tmp_path)
    assert forgot.returncode == 0 and f"{note_id} version 2 (forgotten)" in forgot.stdout
    again = warrant(
        "memory", "correct", note_id, "back", "--project", "lab", "--db", db, cwd=tmp_path
    )
    assert again.returncode == 2 and "was forgotten" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    shown = json.loads(
        warrant(
            "memory", "show", note_id, "--project", "lab", "--db", db, "--json", cwd=tmp_path
        ).stdout
    )
    assert [r["op"] for r in shown] == ["save", "forget"] and shown[0]["text"] is None
    gone = warrant(
        "memory", "search", "clk_en", "--project", "lab", "--db", db, "--json", cwd=tmp_path
    )
    assert json.loads(gone.stdout) == []
    bad = warrant("memory", "save", "x", "--as", "a b", "--db", db, cwd=tmp_path)
    assert bad.returncode == 2 and "--as" in bad.stderr


def test_the_memory_graph_does_what_the_command_line_does_on_its_store():
    """`graph/server/memory_graph.py` (served as `memory`): one operation per run, strict input, a
    one-line error that changes nothing."""
    from graph.server.memory_graph import compile_memory

    store = InMemoryStore()
    graph = compile_memory(store)
    saved = graph.invoke(
        {"op": "save", "project": "lab", "text": NOTE, "signature": "RST_CHK", "by": "alice"}
    )["result"]
    assert memory.notes(store, LAB) == [saved] and saved["by"] == "alice"
    found = graph.invoke({"op": "search", "project": "lab", "query": "clk_en late"})["result"]
    assert [note["id"] for note in found] == [saved["id"]]
    refused = graph.invoke({"op": "search", "project": "lab", "query": "x", "limit": True})
    assert "limit" in refused["error"] and "result" not in refused
    gone = graph.invoke({"op": "forget", "project": "lab", "note": saved["id"], "by": "bob"})
    assert gone["result"]["state"] == "forgotten"
    again = graph.invoke({"op": "correct", "project": "lab", "note": saved["id"], "text": "back"})
    assert again["error"].startswith(f"note {saved['id']} was forgotten")
    assert graph.invoke({"op": "list", "project": "lab"})["result"] == []
    shown = graph.invoke({"op": "show", "project": "lab", "note": saved["id"]})["result"]
    assert [r["op"] for r in shown] == ["save", "forget"] and all(r["text"] is None for r in shown)
