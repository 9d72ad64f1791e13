"""A run's `view` and `messages` channels: what a person watching its state sees each step,
replaced (never accumulated) and bounded; the goal and the handover as chat messages."""

import json

from langgraph.checkpoint.memory import InMemorySaver

from graph.build import compile_graph
from ledger.context import WarrantContext
from nodes.watched import MAX_ITEMS, step_view
from tests.helpers import R42_HISTORY, call, stop


def test_each_step_shows_what_it_did_and_nothing_older(action_file):
    chooser = action_file(
        [
            call("a", "searchlogs", path="lab/runs/R42/reset_smoke.log", query="UVM_ERROR"),
            call("b", "readspec", path="lab/protected/design.txt", section="reset"),
            call("c", "getrunhistory", path=R42_HISTORY, test="reset_smoke"),
            stop("read", hypotheses=[{"statement": "checker fired", "refs": ["E1"]}]),
        ]
    )
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "v1"}}
    views = [
        update["view"]
        for step in graph.stream(
            {"scenario": "R42", "chooser": chooser},
            config,
            stream_mode="updates",
            durability="sync",
            context=WarrantContext(),
        )
        for update in step.values()
        if isinstance(update, dict) and "view" in update
    ]
    receipts = [item["ref"] for view in views for item in view["evidence"]]
    assert receipts == ["E1", "E2"]  # each receipt shown once, by the step that committed it
    refused = [item for view in views for item in view["refusals"]]
    assert [(r["code"], r["owner"]) for r in refused] == [("unapproved_record", "tool:readspec")]
    guards = [view for view in views if view["step"] == "guard"]
    assert [view["decision"].split(":")[0] for view in guards] == [
        "execute",
        "refused",
        "execute",
        "stop",
    ]
    assert max(len(json.dumps(view)) for view in views) < 4000
    state = graph.get_state(config).values
    assert state["view"]["step"] == "handover"
    goal, report = state["messages"]
    assert (goal["type"], goal["content"]) == ("human", state["goal"])
    assert report["type"] == "ai" and report["id"] == "handover-r1"
    assert "- E1 searchlogs · lab/runs/R42/reset_smoke.log" in report["content"]
    assert "Root cause: not established" in report["content"]


def test_a_view_is_bounded_whatever_a_step_wrote():
    many = [
        {"ref": f"E{n}", "tool": "t", "record": "r" * 500, "summary": "s" * 5000} for n in range(50)
    ]
    view = step_view("execute", {"evidence": many, "turn": True}, [])
    assert len(view["evidence"]) == MAX_ITEMS and "turn" not in view  # True is not a turn
    assert all(
        len(item["summary"]) <= 240 and len(item["record"]) <= 120 for item in view["evidence"]
    )
