"""People in the loop through the command line, across process restarts, on the real PostgreSQL."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

import pytest
from langgraph.types import Command

from graph.runs.reading import config_of
from graph.runs.runner import advance, leased_graph
from graph.runs.runner import resume as resume_run
from tests.cli_process import run_json, run_thread, warrant
from tests.helpers import FakeClock, call, stop, write_manifest

ASK = {
    "summary": "need the tester",
    "message": {"kind": "ask_user", "question": "Which seed failed first?"},
}


def test_a_waiting_run_survives_a_restart_and_is_resumed_from_the_inbox(
    postgres_url, tmp_path, action_file
):
    chooser = action_file(
        [ASK, stop("ok", hypotheses=[{"statement": "per the tester", "refs": ["H1"]}])]
    )
    waiting = warrant(
        "run", "R42", "--chooser", chooser, "--db", postgres_url, "--json", "-q", cwd=tmp_path
    )
    assert waiting.returncode == 3, waiting.stderr
    so_far = json.loads(waiting.stdout)
    assert so_far["status"] == "awaiting_human"
    [pending] = so_far["pending"]
    inbox = json.loads(warrant("inbox", "--db", postgres_url, "--json", cwd=tmp_path).stdout)
    assert [(row["thread"], row["interaction_id"], row["scenario"]) for row in inbox] == [
        (so_far["thread_id"], pending["interaction_id"], "R42")
    ]
    handover = run_json(
        "resume",
        so_far["thread_id"],
        "--interaction",
        inbox[0]["interaction_id"],
        "--answer",
        "seed 7",
        "--db",
        postgres_url,
        cwd=tmp_path,
    )
    assert (
        handover["status"] == "stopped"
        and handover["evidence"][0]["excerpt"][0]["text"] == "seed 7"
    )
    assert json.loads(warrant("inbox", "--db", postgres_url, "--json", cwd=tmp_path).stdout) == []


def test_approve_reject_and_edit_from_the_command_line(scenario_dir, tmp_path, action_file):
    manifest = write_manifest(scenario_dir)
    manifest.write_text(
        manifest.read_text().replace(
            'path = "logs/t.log"', 'path = "logs/t.log"\napproval = "human"'
        )
    )
    db = str(tmp_path / "w.sqlite")
    chooser = action_file(
        [
            call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"),
            call("c2", "searchlogs", path="cc/t.log", query="UVM_INFO"),
            call("c3", "searchlogs", path="cc/t.log", query="start"),
            stop(),
        ]
    )
    first = warrant(
        "run", str(manifest), "--chooser", chooser, "--db", db, "--thread", "t", "-q", cwd=tmp_path
    )
    assert first.returncode == 3 and "approve call c1 searchlogs" in first.stdout
    assert warrant("resume", "t", "--answer", "yes", "--db", db, cwd=tmp_path).returncode == 2
    assert warrant("resume", "t", "--edit", "{not json", "--db", db, cwd=tmp_path).returncode == 2
    assert warrant("resume", "t", "--approve", "--db", db, "-q", cwd=tmp_path).returncode == 3
    assert warrant("resume", "t", "--reject", "--db", db, "-q", cwd=tmp_path).returncode == 3
    edit = json.dumps({"path": "cc/t.log", "query": "env", "limit": 1})
    done = warrant("resume", "t", "--edit", edit, "--db", db, "--json", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    handover = json.loads(done.stdout)
    assert [
        (item["ref"], item["call_id"], item["args"]["query"]) for item in handover["evidence"]
    ] == [("E1", "c1", "UVM_ERROR"), ("E2", "c3", "env")]
    assert [(r["code"], r["owner"]) for r in handover["refusals"]] == [("rejected", "human")]


def gated_for(scenario_dir, top_level: str = "") -> str:
    """The log behind a person's approval; `top_level` lines go before the manifest's tables."""
    manifest = write_manifest(scenario_dir)
    text = manifest.read_text().replace(
        'path = "logs/t.log"', 'path = "logs/t.log"\napproval = "human"'
    )
    manifest.write_text(text.replace('goal = "Why', f'{top_level}\ngoal = "Why', 1))
    return str(manifest)


def resumed_events(thread: str, db: str, cwd) -> list[dict]:
    ledger = json.loads(warrant("events", thread, "--db", db, "--json", cwd=cwd).stdout)
    return [event for event in ledger if event["type"] == "resumed"]


def test_who_replied_is_in_the_ledger_and_the_scenario_names_who_may_approve(
    scenario_dir, tmp_path, action_file
):
    manifest = gated_for(scenario_dir, 'approvers = ["alice", "ci.bot"]')
    db = str(tmp_path / "w.sqlite")
    chooser = action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop()])
    run_thread(manifest, chooser, db, "ap", cwd=tmp_path, exit_code=3)
    bob = warrant(
        "resume", "ap", "--approve", "--as", "bob", "--db", db, "--json", "-q", cwd=tmp_path
    )
    assert bob.returncode == 3  # still waiting: bob may not decide it
    refused = json.loads(bob.stdout)["refusals"]
    assert [(r["code"], r["owner"]) for r in refused] == [("not_an_approver", "human")]
    assert (
        "'bob' may not decide this call; the scenario names alice, ci.bot" in refused[0]["detail"]
    )
    alice = warrant(
        "resume", "ap", "--approve", "--as", "alice", "--db", db, "--json", "-q", cwd=tmp_path
    )
    assert alice.returncode == 0, alice.stderr
    assert [item["ref"] for item in json.loads(alice.stdout)["evidence"]] == ["E1"]
    [resumed] = resumed_events("ap", db, tmp_path)
    assert resumed["actor"] == "human:alice" and resumed["payload"]["reply"]["by"] == "alice"


def test_a_reply_is_signed_with_the_os_user_by_default_and_a_bad_name_is_refused(
    scenario_dir, tmp_path, action_file
):
    db = str(tmp_path / "w.sqlite")
    chooser = action_file([call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop()])
    run_thread(gated_for(scenario_dir), chooser, db, "os", cwd=tmp_path, exit_code=3)
    bad = warrant("resume", "os", "--approve", "--as", "a b", "--db", db, cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "error: --as 'a b' is not a user name (letters, digits and _.@+- only, at most 100)"
    ]
    done = warrant("resume", "os", "--approve", "--db", db, "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [resumed] = resumed_events("os", db, tmp_path)
    assert resumed["payload"]["reply"]["by"] == getpass.getuser()


def test_resuming_after_the_reply_time_lets_the_interaction_expire_and_the_run_go_on(
    scenario_dir, tmp_path, action_file
):
    manifest = gated_for(scenario_dir)
    text = (
        Path(manifest).read_text().replace("deadline_s = 120", "deadline_s = 120\nreply_s = 3600")
    )
    Path(manifest).write_text(text)
    db = str(tmp_path / "w.sqlite")
    chooser = action_file(
        [call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"), stop("gave up waiting")]
    )
    assert (
        warrant(
            "run", manifest, "--chooser", chooser, "--db", db, "--thread", "ex", "-q", cwd=tmp_path
        ).returncode
        == 3
    )
    early = warrant("resume", "ex", "--db", db, "--json", "-q", cwd=tmp_path)
    assert early.returncode == 3  # within its reply time, the interaction still waits
    [pending] = json.loads(early.stdout)["pending"]
    # An hour later (the runner's clock, not the test's time): the same resume without a reply
    late = FakeClock(pending["reply_by"] + 1).context()
    handover = resume_run("ex", db, lambda event: None, context=late).handover
    assert handover["status"] == "stopped" and handover["evidence"] == []
    assert [r["code"] for r in handover["refusals"]] == ["interaction_expired"]
    assert [e["type"] for e in ledger_of("ex", db, tmp_path)].count("expired") == 1


def ledger_of(thread: str, db: str, cwd) -> list[dict]:
    return json.loads(warrant("events", thread, "--db", db, "--json", cwd=cwd).stdout)


def test_a_stock_decisions_reply_through_the_runner_runs_the_gated_call(tmp_path):
    """R42-gated waits for its specification read; Agent Inbox's reply, which names no
    interaction, is sent to the one interrupt by its id and the call runs."""
    db = str(tmp_path / "w.sqlite")
    assert (
        warrant("run", "R42-gated", "--db", db, "--thread", "stock", "-q", cwd=tmp_path).returncode
        == 3
    )
    with leased_graph(db, "stock") as graph:
        [waiting] = graph.get_state(config_of("stock")).interrupts
        resume = Command(resume={waiting.id: {"decisions": [{"type": "approve"}]}})
        advance(graph, resume, config_of("stock"), "stock", lambda event: None)
    handover = json.loads(warrant("show", "stock", "--db", db, "--json", cwd=tmp_path).stdout)
    assert (
        handover["status"] == "stopped" and handover["refusals"] == [] and handover["pending"] == []
    )
    assert ("E2", "readspec") in [(item["ref"], item["tool"]) for item in handover["evidence"]]
    [resumed] = resumed_events("stock", db, tmp_path)
    assert resumed["payload"]["reply"] == {
        "interaction_id": waiting.value["interaction_id"],
        "decision": "approve",
    }


LONG_QUERY = "UVM_ERROR reset_controller synchronizer clk_en release after rst_n deasserted seed"
LONG_TOKEN = "tb/checkers/reset_checker.sv::RST_CHK::clk_en_within_four_cycles_of_release"


@pytest.mark.parametrize("columns", [80, 60])
def test_the_inbox_shows_every_argument_whole_at_any_width(
    scenario_dir, tmp_path, action_file, columns
):
    db = str(tmp_path / "w.sqlite")
    args = {"path": "cc/t.log", "query": f"{LONG_QUERY} {LONG_TOKEN}", "limit": 3}
    chooser = action_file([call("c1", "searchlogs", **args), stop()])
    run_thread(gated_for(scenario_dir), chooser, db, "wide", cwd=tmp_path, exit_code=3)
    shown = warrant("inbox", "--db", db, cwd=tmp_path, env={"COLUMNS": str(columns)})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(len(line) <= columns for line in lines) and "…" not in shown.stdout
    joined = "".join(shown.stdout.split())  # a value wrapped over lines, read back whole
    for value in args.values():
        assert "".join(json.dumps(value).split()) in joined
    assert "approve call c1 searchlogs on cc/t.log?" in " ".join(shown.stdout.split())
