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
    assert finished.values["handover"]["evidence"] == before  # the run's own, sealed


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
