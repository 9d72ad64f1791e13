"""Late answers and Continue: an answer to a finished run's open question is kept; `warrant
continue` starts a new run linked to its parent, the parent's evidence carried (nothing runs
again), the late answer as evidence, a fresh budget, the report's next revision."""

from __future__ import annotations

import json

from tests.cli_process import run_thread, warrant
from tests.helpers import call, stop

ASK_ON = {
    "summary": "ask and go on",
    "message": {"kind": "ask_user", "question": "Did u_rst_ctrl change?", "blocking": False},
}
SEARCH = call("c1", "searchlogs", path="lab/runs/R42/reset_smoke.log", query="RST_CHK")
AGAIN = call("c9", "searchlogs", path="lab/runs/R42/reset_smoke.log", query="RST_CHK")
CITING = stop(
    "handed over", hypotheses=[{"statement": "per the tester, and the log", "refs": ["H1", "E1"]}]
)


def _carried_ref(item: dict) -> str | None:
    return (item.get("carried_from") or {}).get("ref")


def ledger(thread: str, db: str, cwd) -> list[dict]:
    return json.loads(warrant("events", thread, "--db", db, "--json", cwd=cwd).stdout)


def test_a_late_answer_and_a_continuation_that_runs_nothing_again(tmp_path, action_file):
    db = str(tmp_path / "w.sqlite")
    run_thread(
        "R42", action_file([ASK_ON, SEARCH, stop("done")]), db, "P", cwd=tmp_path, exit_code=0
    )
    [asked] = [
        e["payload"]["interaction"] for e in ledger("P", db, tmp_path) if e["type"] == "asked"
    ]
    late = warrant(
        "resume",
        "P",
        "--interaction",
        asked["interaction_id"],
        "--answer",
        "yes, in R41",
        "--as",
        "alice",
        "--db",
        db,
        cwd=tmp_path,
    )
    assert late.returncode == 0 and "reply saved" in late.stdout
    shown = json.loads(warrant("show", "P", "--db", db, "--json", cwd=tmp_path).stdout)
    assert shown["late_answers"] == [
        {
            "interaction_id": asked["interaction_id"],
            "question": "Did u_rst_ctrl change?",
            "answer": "yes, in R41",
            "by": "alice",
        }
    ]
    assert (
        "- " + asked["interaction_id"] + " · alice: yes, in R41"
        in warrant("show", "P", "--db", db, cwd=tmp_path).stdout
    )
    chooser = action_file([AGAIN, CITING])  # the same file, rewritten: the parent has ended
    args = (
        "continue",
        "P",
        "--chooser",
        chooser,
        "--db",
        db,
        "--message-id",
        "cont-1",
        "--json",
        "-q",
    )
    first = warrant(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    handover = json.loads(first.stdout)
    assert (handover["parent"], handover["report"], handover["revision"]) == ("P", "P", 2)
    origins = [
        (item["ref"], _carried_ref(item), item.get("late_for")) for item in handover["evidence"]
    ]
    assert origins == [("E1", "E1", None), ("H1", None, "P")]
    assert handover["evidence"][1]["by"] == "alice"
    assert [r["code"] for r in handover["refusals"]] == ["repeated_request"]  # c9 is c1 again
    assert handover["hypotheses"] == [
        {"statement": "per the tester, and the log", "refs": ["H1", "E1"]}
    ]
    child = handover["thread_id"]
    events = ledger(child, db, tmp_path)
    assert events[0]["payload"]["parent"] == "P" and events[0]["payload"]["revision"] == 2
    assert not [e for e in events if e["type"] == "executed"]  # nothing ran again
    again = warrant(*args, cwd=tmp_path)  # a retried send finds the same continuation
    assert again.returncode == 0 and json.loads(again.stdout)["thread_id"] == child
    assert warrant("events", child, "--db", db, "--verify", cwd=tmp_path).returncode == 0
    # the report's revisions, from either run
    for thread, revision, shown in (
        ("P", 2, child),
        ("P", 1, "P"),
        (child, 1, "P"),
        (child, 2, child),
    ):
        found = warrant("show", thread, "--rev", str(revision), "--db", db, "--json", cwd=tmp_path)
        assert found.returncode == 0 and json.loads(found.stdout)["thread_id"] == shown
    missing = warrant("show", "P", "--rev", "3", "--db", db, cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: report 'P' has no revision 3"


def test_only_a_finished_run_can_be_continued(tmp_path, action_file):
    db = str(tmp_path / "w.sqlite")
    ask = {"summary": "q", "message": {"kind": "ask_user", "question": "Which seed?"}}
    run_thread("R42", action_file([ask, stop()]), db, "W", cwd=tmp_path, exit_code=3)
    refused = warrant("continue", "W", "--db", db, cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: thread 'W' has no finished run to continue; resume it instead (`warrant resume W`)"
    ]
    nothing = warrant("continue", "nope", "--db", db, cwd=tmp_path)
    assert nothing.returncode == 2 and "no run with thread id 'nope'" in nothing.stderr
