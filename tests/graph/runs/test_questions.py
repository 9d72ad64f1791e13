"""Non-blocking questions: the run asks and goes on; a reply saved meanwhile is adopted at the
run's next guard step, as a `replied` and an `adopted` event and evidence `H1`."""

from __future__ import annotations

import json

from langgraph.checkpoint.memory import InMemorySaver

from contract.codes import EventKind, Status
from graph.build import compile_graph
from graph.runs.interactions import resume_command
from nodes.questions import save_reply
from tests.cli_process import run_json, run_thread, warrant
from tests.helpers import call, recorded, stop, write_manifest

CONFIG = {"configurable": {"thread_id": "nb"}}
ASK_ON = {
    "summary": "ask and go on",
    "message": {"kind": "ask_user", "question": "Which seed failed first?", "blocking": False},
}
SEARCH = call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR")
CITING = stop("ok", hypotheses=[{"statement": "seed 7, per the tester", "refs": ["H1", "E1"]}])


def gated(scenario_dir) -> str:
    manifest = write_manifest(scenario_dir)
    manifest.write_text(
        manifest.read_text().replace(
            'path = "logs/t.log"', 'path = "logs/t.log"\napproval = "human"'
        )
    )
    return str(manifest)


def types(state: dict) -> list[str]:
    return [event["type"] for event in state["events"]]


def test_a_non_blocking_question_lets_the_run_go_on_and_is_adopted_after_its_reply(
    scenario_dir, action_file
):
    graph = compile_graph(InMemorySaver())
    graph.invoke(
        {"scenario": gated(scenario_dir), "chooser": action_file([ASK_ON, SEARCH, CITING])},
        CONFIG,
        durability="sync",
    )
    state = recorded(graph, CONFIG)
    [question] = state["open_questions"]
    assert state["turn"] == 2  # it asked at turn 1 and went on to propose the call
    assert question["blocking"] is False and types(state).count(EventKind.ASKED) == 1
    assert EventKind.INTERRUPTED in types(state)  # only the approval waits
    body = {"interaction_id": question["interaction_id"], "answer": "seed 7", "by": "alice"}
    save_reply(graph.store, "nb", question, body, 1.0)
    assert EventKind.REPLIED not in types(recorded(graph, CONFIG))  # saved, not yet adopted
    command = resume_command(graph.get_state(CONFIG), lambda kind: {"decision": "approve"}, None)
    graph.invoke(command, CONFIG, durability="sync")
    state = recorded(graph, CONFIG)
    assert state["status"] == Status.STOPPED and state["open_questions"] == []
    assert {item["ref"]: item.get("by") for item in state["evidence"]} == {
        "E1": None,
        "H1": "alice",
    }
    replied, adopted = (
        e for e in state["events"] if e["type"] in (EventKind.REPLIED, EventKind.ADOPTED)
    )
    assert (replied["actor"], replied["time"][:19]) == ("human:alice", "1970-01-01T00:00:01")
    assert adopted["payload"] == {"interaction_id": question["interaction_id"], "ref": "H1"}
    assert state["handover"]["hypotheses"] == [
        {"statement": "seed 7, per the tester", "refs": ["H1", "E1"]}
    ]


def test_an_unanswered_open_question_leaves_the_run_to_finish(action_file):
    graph = compile_graph(InMemorySaver())
    graph.invoke(
        {"scenario": "R42", "chooser": action_file([ASK_ON, stop("no answer needed")])},
        CONFIG,
        durability="sync",
    )
    state = recorded(graph, CONFIG)
    assert state["status"] == Status.STOPPED and len(state["open_questions"]) == 1
    assert (
        "A question to a person is still open: Which seed failed first?"
        in state["handover"]["unknowns"]
    )
    assert state["evidence"] == [] and state["questions_asked"] == 1


def test_the_command_line_saves_an_answer_for_a_running_run_to_adopt(
    scenario_dir, tmp_path, action_file
):
    db = str(tmp_path / "w.sqlite")
    chooser = action_file([ASK_ON, SEARCH, CITING])
    waiting = run_thread(
        gated(scenario_dir), chooser, db, "nbc", "--json", cwd=tmp_path, exit_code=3
    )
    [approval] = json.loads(waiting.stdout)["pending"]
    ledger = json.loads(warrant("events", "nbc", "--db", db, "--json", cwd=tmp_path).stdout)
    [asked] = [e["payload"]["interaction"] for e in ledger if e["type"] == "asked"]
    listed = json.loads(warrant("inbox", "--db", db, "--json", cwd=tmp_path).stdout)
    assert {row["interaction_id"] for row in listed} == {
        asked["interaction_id"],
        approval["interaction_id"],
    }
    saved = warrant(
        "resume",
        "nbc",
        "--interaction",
        asked["interaction_id"],
        "--answer",
        "seed 7",
        "--as",
        "alice",
        "--db",
        db,
        cwd=tmp_path,
    )
    listed = json.loads(warrant("inbox", "--db", db, "--json", cwd=tmp_path).stdout)
    assert [row["interaction_id"] for row in listed] == [approval["interaction_id"]]  # answered
    assert saved.returncode == 0, saved.stderr
    assert (
        saved.stdout.strip()
        == f"reply saved for {asked['interaction_id']}; the run takes it in at its next turn"
    )
    wrong = warrant(
        "resume",
        "nbc",
        "--interaction",
        asked["interaction_id"],
        "--approve",
        "--db",
        db,
        cwd=tmp_path,
    )
    assert wrong.returncode == 2 and "is a question" in wrong.stderr
    handover = run_json(
        "resume",
        "nbc",
        "--interaction",
        approval["interaction_id"],
        "--approve",
        "--db",
        db,
        cwd=tmp_path,
    )
    assert sorted(item["ref"] for item in handover["evidence"]) == ["E1", "H1"]
    assert warrant("events", "nbc", "--db", db, "--verify", cwd=tmp_path).returncode == 0


def pending_of_show(thread: str, db: str, cwd) -> list[tuple[str, str]]:
    shown = warrant("show", thread, "--db", db, "--json", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    return [(item["interaction_id"], item["kind"]) for item in json.loads(shown.stdout)["pending"]]


def asked_of(thread: str, db: str, cwd) -> dict:
    ledger = json.loads(warrant("events", thread, "--db", db, "--json", cwd=cwd).stdout)
    [asked] = [e["payload"]["interaction"] for e in ledger if e["type"] == "asked"]
    return asked


def test_show_json_lists_every_open_interaction_as_pending(scenario_dir, tmp_path, action_file):
    db = str(tmp_path / "w.sqlite")
    chooser = action_file([ASK_ON, SEARCH, CITING])
    run_thread(gated(scenario_dir), chooser, db, "sp", cwd=tmp_path, exit_code=3)
    asked = asked_of("sp", db, tmp_path)
    [(approval, _)] = [row for row in pending_of_show("sp", db, tmp_path) if row[1] == "approval"]
    assert pending_of_show("sp", db, tmp_path) == [
        (approval, "approval"),
        (asked["interaction_id"], "question"),
    ]
    shown = json.loads(warrant("show", "sp", "--db", db, "--json", cwd=tmp_path).stdout)
    assert shown["pending"][1]["question"] == "Which seed failed first?"
    run_thread(
        "R42", action_file([ASK_ON, stop("no answer needed")]), db, "sf", cwd=tmp_path, exit_code=0
    )
    assert pending_of_show("sf", db, tmp_path) == [
        (asked_of("sf", db, tmp_path)["interaction_id"], "question")
    ]
    blocking = {"summary": "q", "message": {"kind": "ask_user", "question": "Which seed?"}}
    run_thread("R42", action_file([blocking, stop()]), db, "sb", cwd=tmp_path, exit_code=3)
    assert [kind for _, kind in pending_of_show("sb", db, tmp_path)] == ["question"]


def test_an_answer_to_a_finished_run_says_no_turn_takes_it_in(tmp_path, action_file):
    db = str(tmp_path / "w.sqlite")
    run_thread(
        "R42", action_file([ASK_ON, stop("no answer needed")]), db, "fr", cwd=tmp_path, exit_code=0
    )
    question = asked_of("fr", db, tmp_path)["interaction_id"]
    unnamed = warrant("resume", "fr", "--answer", "seed 7", "--db", db, cwd=tmp_path)
    assert unnamed.returncode == 2 and unnamed.stdout == ""
    hint = f"to keep an answer for `warrant continue fr`, name the open question with --interaction ({question})"
    refused = "run 'fr' has finished (completed): nothing waits for a reply and it was not recorded"
    assert unnamed.stderr.splitlines() == [f"error: {refused}; {hint}"]
    assert pending_of_show("fr", db, tmp_path) == [(question, "question")]  # nothing recorded
    approving = warrant("resume", "fr", "--approve", "--db", db, cwd=tmp_path)
    assert approving.returncode == 2
    assert approving.stderr.splitlines() == [f"error: {refused}"]
    late = warrant(
        "resume", "fr", "--interaction", question, "--answer", "seed 7", "--db", db, cwd=tmp_path
    )
    assert late.returncode == 0, late.stderr  # a late answer is kept, for `warrant continue`
    said = f"reply saved for {question}, but run 'fr' has finished (completed): no turn of it will take it in; `warrant continue fr` starts a run that does"
    assert late.stdout.splitlines() == [said]
    assert pending_of_show("fr", db, tmp_path) == []
