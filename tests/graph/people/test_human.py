"""People in the loop, in-process: questions and approvals as interrupts bound to interactions."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graph.build import compile_graph
from graph.runs.interactions import InteractionError, pending_of, resume_command
from ledger.bodies import receipt_digest
from tests.helpers import call, recorded, stop, write_manifest

ASK = {
    "summary": "need the tester",
    "message": {"kind": "ask_user", "question": "Which seed failed first?"},
}
CONFIG = {"configurable": {"thread_id": "h1"}}
TWO_READS = {
    "summary": "two reads",
    "tool_calls": [
        {"id": "a", "name": "searchlogs", "args": {"path": "cc/t.log", "query": "UVM_ERROR"}},
        {"id": "b", "name": "readspec", "args": {"path": "cc/spec.md", "section": "fifo_depth"}},
    ],
}


@pytest.fixture
def gated(scenario_dir):
    """The throwaway scenario with its log and spec behind a person's approval."""
    manifest = write_manifest(scenario_dir)
    text = manifest.read_text()
    for path in ("logs/t.log", "spec.md"):
        text = text.replace(f'path = "{path}"', f'path = "{path}"\napproval = "human"')
    manifest.write_text(text)
    return str(manifest)


def start(scenario: str, chooser: str):
    graph = compile_graph(InMemorySaver())
    graph.invoke({"scenario": scenario, "chooser": chooser}, CONFIG, durability="sync")
    return graph


def reply(graph, body: dict, interaction_id: str | None = None):
    """Resume with `body`; returns the thread's state with its record (events, evidence)."""
    command = resume_command(graph.get_state(CONFIG), lambda kind: body, interaction_id)
    graph.invoke(command, CONFIG, durability="sync")
    return recorded(graph, CONFIG)


def pending(graph):
    return [interaction for _, interaction in pending_of(graph.get_state(CONFIG))]


def types(graph):
    return [event["type"] for event in recorded(graph, CONFIG)["events"]]


def test_a_question_waits_as_an_interrupt_and_the_answer_becomes_h1(action_file):
    graph = start(
        "R42",
        action_file([ASK, stop("ok", hypotheses=[{"statement": "seed 7 first", "refs": ["H1"]}])]),
    )
    [question] = pending(graph)
    assert question["kind"] == "question" and question["question"] == "Which seed failed first?"
    assert question["thread"] == "h1" and question["turn"] == 1
    assert graph.get_state(CONFIG).next == ("human",)
    final = reply(graph, {"answer": "seed 7, in R38"})
    h1 = final["evidence"][0]
    assert (h1["ref"], h1["kind"], h1["excerpt"][0]["text"]) == (
        "H1",
        "human_answer",
        "seed 7, in R38",
    )
    assert "not a verified observation" in h1["summary"]
    assert final["status"] == "stopped" and final["hypotheses"][0]["refs"] == ["H1"]


def test_a_reply_naming_another_interaction_is_refused_and_the_question_stays(action_file):
    graph = start("R42", action_file([ASK, stop()]))
    [question] = pending(graph)
    interrupt_id = graph.get_state(CONFIG).interrupts[0].id
    graph.invoke(
        Command(resume={interrupt_id: {"interaction_id": "ix-elsewhere", "answer": "x"}}), CONFIG
    )
    refusals = graph.get_state(CONFIG).values["refusals"]
    assert [(r["code"], r["owner"]) for r in refusals] == [("interaction_mismatch", "human")]
    assert [p["interaction_id"] for p in pending(graph)] == [question["interaction_id"]]
    assert reply(graph, {"answer": "seed 7"})["status"] == "stopped"


def test_a_malformed_reply_is_refused_and_the_question_stays(action_file):
    graph = start("R42", action_file([ASK, stop()]))
    reply(graph, {"answer": ""})
    assert graph.get_state(CONFIG).values["refusals"][0]["code"] == "malformed_reply"
    assert len(pending(graph)) == 1


def test_unknown_or_used_interactions_are_refused_not_ignored(action_file):
    graph = start("R42", action_file([ASK, stop()]))
    [question] = pending(graph)
    with pytest.raises(InteractionError, match="not pending"):
        reply(graph, {"answer": "x"}, "ix-unknown")
    reply(graph, {"answer": "seed 7"}, question["interaction_id"])
    with pytest.raises(InteractionError, match="nothing is waiting"):
        reply(graph, {"answer": "again"}, question["interaction_id"])


def test_code_before_interrupt_records_nothing_twice(action_file):
    graph = start("R42", action_file([ASK, stop()]))
    graph.invoke(
        Command(resume={"not-an-interrupt-id": {"answer": "ignored"}}), CONFIG
    )  # re-runs the node
    graph.invoke(None, CONFIG)  # and again
    assert types(graph).count("interrupted") == 1
    reply(graph, {"answer": "seed 7"})
    assert types(graph).count("interrupted") == 1 and types(graph).count("resumed") == 1
    assert graph.get_state(CONFIG).values["questions_asked"] == 1


def test_the_question_budget_applies(scenario_dir, action_file):
    manifest = (
        write_manifest(scenario_dir)
        .read_text()
        .replace("deadline_s = 120", "deadline_s = 120\nquestions = 1")
    )
    (scenario_dir / "q.toml").write_text(manifest)
    graph = start(str(scenario_dir / "q.toml"), action_file([ASK, ASK, stop()]))
    final = reply(graph, {"answer": "one"})
    assert [r["code"] for r in final["refusals"]] == ["question_budget_exhausted"]


def test_an_approved_call_runs(gated, action_file):
    graph = start(
        gated, action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop()])
    )
    [approval] = pending(graph)
    assert approval["kind"] == "approval"
    assert approval["call"] == {
        "id": "c1",
        "name": "searchlogs",
        "args": {"path": "cc/t.log", "query": "UVM_ERROR", "limit": 20},
    }
    assert recorded(graph, CONFIG)["evidence"] == []
    assert "executing" not in types(graph) and "executed" not in types(graph)
    final = reply(graph, {"decision": "approve"})
    assert [(item["ref"], item["call_id"]) for item in final["evidence"]] == [("E1", "c1")]
    ran = [e for e in final["events"] if e["type"] in ("approved", "executing", "executed")]
    assert [event["type"] for event in ran] == ["approved", "executing", "executed"]
    executing, executed = ran[1]["payload"], ran[2]["payload"]
    assert (
        (executing["call_id"], executing["ref"])
        == (executed["call_id"], executed["ref"])
        == ("c1", "E1")
    )
    assert executed["attempt"] == 1 and executed["receipt"] == receipt_digest(final["evidence"][0])


def test_a_rejected_call_never_runs(gated, action_file):
    graph = start(
        gated, action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop()])
    )
    final = reply(graph, {"decision": "reject"})
    assert final["evidence"] == []
    assert [(r["code"], r["owner"]) for r in final["refusals"]] == [("rejected", "human")]
    assert "executed" not in types(graph)


def test_an_edit_is_checked_again_by_the_guard(gated, action_file):
    graph = start(
        gated,
        action_file([call("c1", "readspec", path="cc/spec.md", section="fifo_depth"), stop()]),
    )
    final = reply(graph, {"decision": "edit", "args": {"path": "../secret.txt", "section": "x"}})
    assert [(r["code"], r["owner"]) for r in final["refusals"]] == [
        ("unapproved_record", "tool:readspec")
    ]
    assert final["evidence"] == [] and "never readable" not in str(final)


def test_an_edit_to_the_protected_lab_record_is_refused(action_file, tmp_path):
    import shutil

    from lab import LAB_DIR

    lab = tmp_path / "lab"
    shutil.copytree(LAB_DIR, lab, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    manifest = lab / "R42.toml"
    manifest.write_text(
        manifest.read_text().replace(
            'path = "spec/reset_controller.md"',
            'path = "spec/reset_controller.md"\napproval = "human"',
        )
    )
    graph = start(
        str(manifest),
        action_file(
            [
                call(
                    "c1", "readspec", path="lab/spec/reset_controller.md", section="reset_release"
                ),
                stop(),
            ]
        ),
    )
    final = reply(
        graph, {"decision": "edit", "args": {"path": "lab/protected/design.txt", "section": "x"}}
    )
    assert [(r["code"], r["owner"]) for r in final["refusals"]] == [
        ("unapproved_record", "tool:readspec")
    ]
    assert "PROTECTED DESIGN NOTES" not in str(final)


def test_a_narrowing_edit_runs_with_the_edited_arguments(gated, action_file):
    graph = start(
        gated, action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM"), stop()])
    )
    final = reply(
        graph, {"decision": "edit", "args": {"path": "cc/t.log", "query": "UVM_ERROR", "limit": 1}}
    )
    assert final["evidence"][0]["args"] == {"path": "cc/t.log", "query": "UVM_ERROR", "limit": 1}


def test_two_pending_approvals_resume_by_id(gated, action_file):
    graph = start(gated, action_file([TWO_READS, stop()]))
    first, second = pending(graph)
    assert {first["call"]["id"], second["call"]["id"]} == {"a", "b"}
    reply(graph, {"decision": "approve"}, second["interaction_id"])
    assert [p["interaction_id"] for p in pending(graph)] == [first["interaction_id"]]
    with pytest.raises(InteractionError):
        reply(graph, {"decision": "approve"}, second["interaction_id"])
    final = reply(graph, {"decision": "approve"}, first["interaction_id"])
    assert [item["call_id"] for item in final["evidence"]] == ["a", "b"]


def test_several_pending_need_a_named_interaction(gated, action_file):
    graph = start(gated, action_file([TWO_READS, stop()]))
    with pytest.raises(InteractionError, match="name one"):
        reply(graph, {"decision": "approve"})


def test_both_pending_resumed_in_one_command(gated, action_file):
    graph = start(gated, action_file([TWO_READS, stop()]))
    snapshot = graph.get_state(CONFIG)
    resume = {
        item.id: {
            "interaction_id": item.value["interaction_id"],
            "decision": "reject" if item.value["call"]["id"] == "a" else "approve",
        }
        for item in snapshot.interrupts
    }
    graph.invoke(Command(resume=resume), CONFIG)
    final = recorded(graph, CONFIG)
    assert final["evidence"] == []
    assert [(r["code"], r["call"]["id"]) for r in final["refusals"]] == [
        ("rejected", "a"),
        ("rejected", "b"),
    ]
    assert final["refusals"][1]["detail"].startswith("not run: a person rejected a of the same")
    refused = [event for event in final["events"] if event["type"] == "refused"]
    assert [event["payload"]["call"]["id"] for event in refused] == ["a", "b"]


def test_a_new_input_on_a_waiting_thread_is_refused_and_the_run_waits_on(gated, action_file):
    """A second input (the LangGraph server accepts one on any thread) changes nothing it pinned."""
    graph = start(gated, action_file([TWO_READS, stop()]))
    before = graph.get_state(CONFIG)
    graph.invoke({"scenario": "STA1", "goal": "Something else"}, CONFIG, durability="sync")
    after = graph.get_state(CONFIG)
    assert {key: after.values[key] for key in ("scenario", "goal", "chooser", "grant")} == {
        key: before.values[key] for key in ("scenario", "goal", "chooser", "grant")
    }
    assert recorded(graph, CONFIG)["events"][-1]["payload"]["code"] == "thread_in_use"
    assert sorted(i.value["interaction_id"] for i in after.interrupts) == sorted(
        i.value["interaction_id"] for i in before.interrupts
    )
    reply(graph, {"decision": "approve"}, pending(graph)[0]["interaction_id"])
    final = reply(graph, {"decision": "approve"})
    assert [item["call_id"] for item in final["evidence"]] == ["a", "b"]
    assert [event["type"] for event in final["events"]].count("admitted") == 1


def test_a_new_input_on_a_finished_thread_leaves_its_handover(r42):
    graph = compile_graph(InMemorySaver())
    graph.invoke({"scenario": "R42"}, CONFIG, durability="sync")
    first = recorded(graph, CONFIG)
    graph.invoke({"scenario": "STA1"}, CONFIG, durability="sync")
    again = recorded(graph, CONFIG)
    assert again["handover"] == first["handover"] and again["scenario"] == "R42"
    assert again["events"][:-1] == first["events"]
    assert again["events"][-1]["type"] == "refused"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({"scenario": 5}, "needs scenario"),
        ({}, "needs scenario"),
        ({"scenario": "R42", "goal": 5}, "goal must be a string, not int"),
        ({"scenario": "R42", "chooser": ["x"]}, "chooser must be a string, not list"),
    ],
)
def test_a_run_input_of_the_wrong_type_is_a_clear_error(given, says):
    graph = compile_graph(InMemorySaver())
    with pytest.raises(ValueError, match=says):
        graph.invoke(given, CONFIG, durability="sync")


STOCK_APPROVE = {"decisions": [{"type": "approve"}]}
"""Agent Inbox's / LangChain's HITL middleware reply: it names no interaction."""


@pytest.mark.parametrize("by_id", [True, False], ids=["by-interrupt-id", "bare"])
def test_a_stock_decisions_reply_is_bound_by_its_interrupt_and_the_call_runs(
    gated, action_file, by_id
):
    graph = start(
        gated, action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop()])
    )
    [waiting] = graph.get_state(CONFIG).interrupts
    graph.invoke(Command(resume={waiting.id: STOCK_APPROVE} if by_id else STOCK_APPROVE), CONFIG)
    final = recorded(graph, CONFIG)
    assert final["refusals"] == [] and final["status"] == "stopped"
    assert [(item["ref"], item["call_id"]) for item in final["evidence"]] == [("E1", "c1")]
    [resumed] = [e["payload"] for e in final["events"] if e["type"] == "resumed"]
    assert resumed["reply"] == {
        "interaction_id": waiting.value["interaction_id"],
        "decision": "approve",
    }


def test_a_stock_edit_is_checked_again_by_the_guard(gated, action_file):
    graph = start(
        gated,
        action_file([call("c1", "readspec", path="cc/spec.md", section="fifo_depth"), stop()]),
    )
    edit = {
        "type": "edit",
        "edited_action": {"name": "readspec", "args": {"path": "../secret.txt", "section": "x"}},
    }
    graph.invoke(Command(resume={"decisions": [edit]}), CONFIG)
    final = recorded(graph, CONFIG)
    assert [(r["code"], r["owner"]) for r in final["refusals"]] == [
        ("unapproved_record", "tool:readspec")
    ]
    assert final["evidence"] == []


def test_a_stock_reply_with_two_pending_is_refused_as_ambiguous_and_the_run_waits(
    gated, action_file
):
    graph = start(gated, action_file([TWO_READS, stop()]))
    first, second = graph.get_state(CONFIG).interrupts
    with pytest.raises(RuntimeError, match="multiple pending interrupts"):  # LangGraph's own
        graph.invoke(Command(resume=STOCK_APPROVE), CONFIG)
    graph.invoke(Command(resume={first.id: STOCK_APPROVE}), CONFIG)
    state = graph.get_state(CONFIG)
    [refusal] = state.values["refusals"]
    ids = f"{first.value['interaction_id']}, {second.value['interaction_id']}"
    assert (refusal["code"], refusal["owner"]) == ("interaction_mismatch", "human")
    assert f"the reply names no interaction and 2 are pending ({ids})" in refusal["detail"]
    assert [i.value["interaction_id"] for i in state.interrupts] == [second.value["interaction_id"]]
    assert state.values["replies"] == {} and recorded(graph, CONFIG)["evidence"] == []
    # once the other is answered, the refused one is asked again, alone
    reply(graph, {"decision": "approve"}, second.value["interaction_id"])
    assert [p["interaction_id"] for p in pending(graph)] == [first.value["interaction_id"]]
    graph.invoke(Command(resume=STOCK_APPROVE), CONFIG)  # now alone: the stock reply binds
    assert [item["call_id"] for item in recorded(graph, CONFIG)["evidence"]] == ["a", "b"]
