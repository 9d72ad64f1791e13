"""Remember needs a person: a note the chooser proposes is saved only as a person decides it,
once, and a report shows a note until it is forgotten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from graph.runs.interactions import pending_of
from nodes import memory
from scenario.registry import load_scenario
from tests.cli_process import run_json, warrant
from tests.helpers import call, recorded, stop, write_manifest
from tests.nodes.memory_runs import (
    CANARY,
    CONFIG,
    LAB,
    recall,
    remember,
    reply,
    start,
    with_memory,
)

# Remember: proposed by the chooser, saved only as a person decides.


@pytest.mark.parametrize(
    ("decision", "expected"),
    [
        ({"decision": "approve", "by": "bob"}, "FIFO overflow seen in A2"),
        (
            {
                "decision": "edit",
                "args": {"text": "FIFO overflow in A2 (BUG-77)", "signature": "FIFO"},
                "by": "bob",
            },
            "FIFO overflow in A2 (BUG-77)",
        ),
        ({"decision": "reject", "by": "bob"}, None),
        # Agent Inbox's shape: the whole action sent back, edited
        (
            {
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {
                            "name": "remember",
                            "args": {"text": "FIFO overflow (inbox)", "refs": ["E1"]},
                        },
                    }
                ],
                "by": "bob",
            },
            "FIFO overflow (inbox)",
        ),
    ],
)
def test_a_remember_waits_for_a_person_and_saves_only_what_they_decide(
    scenario_dir, action_file, decision, expected
):
    store = InMemoryStore()
    script = action_file(
        [
            call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"),
            remember("FIFO overflow seen in A2", signature="FIFO overflow", refs=["E1"]),
            stop("done"),
        ]
    )
    graph = start(with_memory(scenario_dir), script, store)
    [(_, waiting)] = pending_of(graph.get_state(CONFIG))
    assert waiting["kind"] == "remember" and waiting["call"]["args"]["refs"] == ["E1"]
    assert memory.notes(store, LAB) == []  # nothing saved before a person decides
    final = reply(graph, decision)
    notes = memory.notes(store, LAB)
    assert final["status"] == "stopped"
    if expected is None:
        assert (
            notes == []
            and final["refusals"][-1]["code"] == "rejected"
            and "remembered" not in final["handover"]
        )
        return
    (note,) = notes
    assert (note["text"], note["by"]) == (expected, "bob")
    (receipt,) = final["handover"]["remembered"]
    assert (receipt["note"], receipt["by"], receipt["edited"]) == (
        note["id"],
        "bob",
        decision.get("decision") != "approve",
    )


def test_remember_without_memory_or_citing_nothing_is_refused(scenario_dir, action_file):
    script = action_file([remember("x", refs=["E9"]), stop("done")])
    final = recorded(start(with_memory(scenario_dir), script, InMemoryStore()), CONFIG)
    assert [r["code"] for r in final["refusals"]] == ["unknown_reference"]
    plain = compile_graph(InMemorySaver(), InMemoryStore())
    plain.invoke(
        {
            "scenario": str(write_manifest(scenario_dir)),
            "chooser": action_file([remember("x"), stop("done")]),
        },
        {"configurable": {"thread_id": "p"}},
    )
    assert [
        r["code"] for r in plain.get_state({"configurable": {"thread_id": "p"}}).values["refusals"]
    ] == ["unknown_tool"]


def remembering_run(
    scenario_dir: Path, script: str, db: str, cwd: Path, exit_code: int = 0
) -> dict[str, Any]:
    """The handover of `warrant run` of the scenario with memory on, chosen by `script`."""
    return run_json(
        "run",
        str(with_memory(scenario_dir)),
        "--chooser",
        script,
        "--db",
        db,
        cwd=cwd,
        exit_code=exit_code,
    )


def test_the_cli_approves_a_note_and_memory_lists_it(scenario_dir, action_file, tmp_path):
    db = str(tmp_path / "w.db")
    script = action_file([remember("FIFO overflow seen in A2", signature="FIFO"), stop("done")])
    handover = remembering_run(scenario_dir, script, db, tmp_path, exit_code=3)
    assert handover["pending"][0]["kind"] == "remember"
    inbox = warrant("inbox", "--db", db, cwd=tmp_path)
    assert "FIFO overflow" in inbox.stdout and inbox.returncode == 0
    done = warrant(
        "resume",
        handover["thread_id"],
        "--approve",
        "--db",
        db,
        "--as",
        "carol",
        "--json",
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    listed = warrant("memory", "list", "--project", "team", "--db", db, "--json", cwd=tmp_path)
    assert [(n["text"], n["by"]) for n in json.loads(listed.stdout)] == [
        ("FIFO overflow seen in A2", "carol")
    ]


def test_a_decision_carried_out_again_saves_the_same_note_once(scenario_dir):
    """The guard step that saves an approved note may run again after a crash: the note's id is
    derived from the interaction, so the second pass finds it and writes nothing."""
    from nodes.remember import remembered

    store = InMemoryStore()
    grant = load_scenario(with_memory(scenario_dir)).model_dump(mode="json")
    interaction = {
        "interaction_id": "ix-0123456789abcdef",
        "call": {
            "id": "remember",
            "name": "remember",
            "args": {"text": "FIFO overflow", "signature": "", "refs": []},
        },
    }
    state = {"turn": 2, "grant": grant}
    first = remembered(store, state, interaction, {"decision": "approve", "by": "bob"}, 5.0)
    second = remembered(store, state, interaction, {"decision": "approve", "by": "bob"}, 9.0)
    (note,) = memory.notes(store, LAB)
    assert first["remembered"] == second["remembered"] and note["at"] == 5.0
    assert [r["version"] for r in memory.history(store, LAB, note["id"])] == [1]


def test_a_report_shows_a_note_until_it_is_forgotten_and_keeps_none(
    scenario_dir, action_file, tmp_path
):
    """`warrant show` reads a recalled note's text from memory when it shows the report: after a
    forget, the finished run's report marks it forgotten and no stored value holds its text."""
    db = str(tmp_path / "w.db")
    saved = warrant(
        "memory", "save", CANARY, "--project", "team", "--db", db, "--json", cwd=tmp_path
    )
    note = json.loads(saved.stdout)
    script = action_file(
        [
            recall("r1", "canary"),
            stop("done", hypotheses=[{"statement": "tracked", "refs": ["M1"]}]),
        ]
    )
    handover = remembering_run(scenario_dir, script, db, tmp_path)
    thread = handover["thread_id"]
    assert handover["memory"][0]["text"] == CANARY
    shown = warrant("show", thread, "--db", db, cwd=tmp_path)
    assert (
        "Historical notes (memory, not evidence)" in shown.stdout and "CANARY-7f3a" in shown.stdout
    )
    assert "(from memory, not observed in this run)" in shown.stdout
    warrant("memory", "forget", note["id"], "--project", "team", "--db", db, cwd=tmp_path)
    after = warrant("show", thread, "--db", db, "--json", cwd=tmp_path)
    assert after.returncode == 0 and "CANARY-7f3a" not in after.stdout
    assert json.loads(after.stdout)["memory"][0]["forgotten"]
    events = warrant("events", thread, "--db", db, "--json", cwd=tmp_path)
    assert "CANARY-7f3a" not in events.stdout
