"""State the run did not write is found and refused, whatever wrote it (here LangGraph's own
`update_state` and `Command`, as a server client or a database edit would): the run ends
`state_tampered` with a recorded refusal, and no forged value or outside byte reaches anything."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.types import Command, Send

from graph.build import compile_graph
from graph.persistence import open_run
from graph.runner import resume
from lab import LAB_DIR
from nodes.handover import unsealed
from tests.helpers import R42_LOG

GATED = str(LAB_DIR / "R42-gated.toml")
SECRET = "PROTECTED DESIGN NOTES"


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "t.sqlite")
    return request.getfixturevalue("postgres_url")


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def waiting_run(graph: Any, thread: str) -> dict[str, Any]:
    graph.invoke({"scenario": GATED}, config(thread), durability="sync")
    snapshot = graph.get_state(config(thread))
    assert snapshot.interrupts, "R42-gated waits for an approval"
    return snapshot.values


def assert_refused_and_clean(values: dict[str, Any]) -> None:
    handover = values["handover"]
    assert handover["status"] == "state_tampered"
    assert [r["code"] for r in handover["refusals"]].count("state_tampered") == 1
    assert SECRET not in json.dumps(values)
    assert all("FORGED" not in json.dumps(item) for item in handover["evidence"])


def test_a_widened_grant_is_never_used(db):
    with open_run(db, "grant") as saver:
        graph = compile_graph(saver)
        values = waiting_run(graph, "grant")
        grant = values["grant"]
        outside = dict(next(iter(grant["records"].values())))
        outside.update(id="lab/protected/design.txt", kind="spec",
                       path=str(LAB_DIR / "protected" / "design.txt"))  # fmt: skip
        widened = {**grant, "records": {**grant["records"], outside["id"]: outside}}
        [pending] = graph.get_state(config("grant")).interrupts
        reply = {"interaction_id": pending.value["interaction_id"], "decision": "approve"}
        graph.invoke(Command(update={"grant": widened}, resume={pending.id: reply}),
                     config("grant"), durability="sync")  # fmt: skip
        assert_refused_and_clean(graph.get_state(config("grant")).values)


def test_forged_evidence_never_reaches_the_handover(db):
    with open_run(db, "evidence") as saver:
        graph = compile_graph(saver)
        before = waiting_run(graph, "evidence")["evidence"]
        forged = {"ref": "E9", "call_id": "x9", "kind": "observation", "tool": "searchlogs",
                  "args": {}, "record": R42_LOG, "sha256": "0" * 64, "sources": [],
                  "summary": "FORGED", "excerpt": [], "truncated": False, "flags": [], "error": None, "turn": 1}  # fmt: skip
        graph.update_state(config("evidence"), {"evidence": [forged]})  # drops the interrupt
    finished = resume("evidence", db, lambda _: None)  # `warrant resume evidence`
    assert_refused_and_clean(finished.values)
    assert finished.values["handover"]["evidence"] == unsealed(before)  # the run's own, sealed


def test_a_forged_task_for_the_executor_is_not_run(db, tmp_path):
    with open_run(db, "goto") as saver:
        graph = compile_graph(saver)
        values = waiting_run(graph, "goto")
        record = dict(next(iter(values["grant"]["records"].values())))
        record.update(path=str(LAB_DIR / "protected" / "design.txt"))
        task = {"call": {"id": "z", "name": "searchlogs", "args": {"path": record["id"], "query": "PROTECTED"}, "ref": "E1"},
                "profile": "triage", "records": {"path": record}, "turn": 1,
                "manifest": values["grant"]["manifest"], "manifest_sha256": values["grant"]["manifest_sha256"],
                "deadline_at": values["deadline_at"], "call_s": 30}  # fmt: skip
        graph.invoke(Command(goto=Send("execute", task)), config("goto"), durability="sync")
        final = graph.get_state(config("goto")).values
        if "handover" not in final:  # the approval still waits; the forged task ended nothing yet
            graph.invoke(None, config("goto"), durability="sync")
            final = graph.get_state(config("goto")).values
        assert SECRET not in json.dumps(final)
        assert final.get("tampered"), "the forged task was recorded"


def test_a_goal_rewritten_beside_the_run_is_not_reported(db):
    """A value written without the run's nodes (as a database edit would write it)."""
    with open_run(db, "edited") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "edited")
        graph.update_state(config("edited"), {"goal": "FORGED goal"}, as_node="admit")
    finished = resume("edited", db, lambda _: None)
    handover = finished.values["handover"]
    assert handover["status"] == "state_tampered"
    assert handover["goal"] == "Why did reset_smoke fail in regression run R42?"
    [refusal] = [r for r in handover["refusals"] if r["code"] == "state_tampered"]
    assert "goal" in refusal["detail"] and refusal["owner"] == "runtime"


def test_a_forged_handover_is_not_the_runs_and_is_recorded(db):
    with open_run(db, "fh") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "fh")
        graph.update_state(config("fh"), {"handover": {"status": "stopped", "evidence": [], "statement": "FORGED"}})  # fmt: skip
    shown = resume("fh", db, lambda _: None)
    assert shown.handover["status"] == "state_tampered"
    assert "FORGED" not in json.dumps(shown.handover)
    assert_refused_and_clean(shown.values)


def test_sealed_values_and_tasks_copied_from_another_run_are_not_this_runs(db):
    """Seals cover their thread: the grant, an evidence item and an execute task of run P,
    copied into run G, are refused in G."""
    with open_run(db, "P") as saver:
        donor = compile_graph(saver)
        donor.invoke({"scenario": "R42"}, config("P"), durability="sync")
        p_values = donor.get_state(config("P")).values
        tasks = [write for item in saver.list(config("P")) for write in item.pending_writes
                 if write[1] == "__pregel_tasks" and getattr(write[2], "node", None) == "execute"]  # fmt: skip
    with open_run(db, "G") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "G")
        graph.invoke(Command(goto=Send("execute", tasks[0][2].arg)), config("G"), durability="sync")
        assert graph.get_state(config("G")).values.get("tampered")
    with open_run(db, "G2") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "G2")
        graph.update_state(config("G2"), {"grant": p_values["grant"], "seals": {"grant": p_values["seals"]["grant"]}})  # fmt: skip
    assert resume("G2", db, lambda _: None).handover["status"] == "state_tampered"
    with open_run(db, "G3") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "G3")
        graph.update_state(config("G3"), {"evidence": [p_values["evidence"][1]]})
    handover = resume("G3", db, lambda _: None).handover
    assert handover["status"] == "state_tampered" and "c2" not in {e["call_id"] for e in handover["evidence"]}  # fmt: skip


def test_a_forged_turn_never_reaches_the_record(db):
    with open_run(db, "turn") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "turn")
        graph.update_state(config("turn"), {"turn": "FORGED-turn"})
    finished = resume("turn", db, lambda _: None)
    assert finished.handover["status"] == "state_tampered"
    assert "FORGED" not in json.dumps(finished.values["handover"])
    assert all(isinstance(event["turn"], int) for event in finished.values["events"])


def test_a_write_that_changes_nothing_but_drops_the_interrupt_leaves_the_person_asked(db):
    with open_run(db, "noop") as saver:
        graph = compile_graph(saver)
        before = waiting_run(graph, "noop")
        graph.update_state(config("noop"), {"events": []})
        assert not graph.get_state(config("noop")).interrupts  # LangGraph dropped it
    again = resume("noop", db, lambda _: None)
    assert [item["interaction_id"] for item in again.pending] == [
        item["interaction_id"] for item in before["pending"]
    ]
    assert "handover" not in again.values


def test_the_runs_own_values_put_back_out_of_step_end_it(db):
    """A seal proves who wrote a value, not when: an older sealed decision put back, or an
    earlier execute task sent again, is found by what no longer fits and ends the run."""
    with open_run(db, "old") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "old")
        history = list(graph.get_state_history(config("old")))
        first = next(s.values for s in reversed(history) if (s.values.get("decision") or {}).get("turn") == 1)  # fmt: skip
        graph.update_state(config("old"), {"decision": first["decision"]})
        graph.update_state(config("old"), {"seals": {"decision": first["seals"]["decision"]}})
    assert resume("old", db, lambda _: None).handover["status"] == "state_tampered"

    with open_run(db, "turn-back") as saver:
        graph = compile_graph(saver)
        waiting_run(graph, "turn-back")
        history = list(graph.get_state_history(config("turn-back")))
        first = next(s.values for s in reversed(history) if s.values.get("turn") == 1)
        graph.update_state(config("turn-back"), {"turn": 1, "seals": {"turn": first["seals"]["turn"]}})  # fmt: skip
    assert resume("turn-back", db, lambda _: None).handover["status"] == "state_tampered"

    with open_run(db, "again") as saver:
        graph = compile_graph(saver)
        graph.invoke({"scenario": "R42"}, config("again"), durability="sync")
        [task] = [write[2] for item in saver.list(config("again")) for write in item.pending_writes
                  if write[1] == "__pregel_tasks" and getattr(write[2], "node", None) == "execute"
                  and write[2].arg["call"]["id"] == "c1"]  # fmt: skip
        graph.invoke(Command(goto=task), config("again"), durability="sync")
        values = graph.get_state(config("again")).values
    assert values["handover"]["status"] == "state_tampered"
    assert [e["type"] for e in values["events"]].count(
        "handover"
    ) == 2  # the first, then the record
