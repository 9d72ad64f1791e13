"""Durable runs on the real PostgreSQL server: crashes, lost connections, leases, message identity."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import psycopg
import pytest

from lab import LAB_DIR
from ledger.persistence.savers import lease_name
from tests.cli_process import (
    assert_exactly_once,
    assert_resumed_as_uncut,
    ledger,
    run_json,
    start_paused,
    warrant,
    without_reruns,
    without_thread,
)
from tests.helpers import R42_CALLS, R42_LOG, R42_PARTS, R42_SPEC, batch, tool_call

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

# Every node boundary of the R42 run: after admit, after each choose, after each guard, after each
# execute, before the handover — and inside an execute whose tool ran but whose receipt was not saved.
CRASH_POINTS = [
    "before:choose@1",
    "before:guard@1",
    "before:execute@c1",
    "after:execute@c1",
    "before:choose@2",
    "before:guard@2",
    "before:execute@c2",
    "after:execute@c2",
    "before:choose@3",
    "before:guard@3",
    "before:execute@c3",
    "before:choose@4",
    "before:guard@4",
    "before:handover",
    # written to the store, not yet to the checkpoint: the step runs again and overwrites it
    "stored:choose@2",
    "stored:guard@2",
    "stored:choose@3",
    "stored:handover",
]


def patient_r42(folder: Path) -> str:
    """R42 with an hour's deadline: its runs wait while the others are resumed one by one, and
    no outcome may depend on how fast the machine is."""
    for part in R42_PARTS:
        shutil.copytree(LAB_DIR / part, folder / part)
    manifest = folder / "R42.toml"
    manifest.write_text(
        (LAB_DIR / "R42.toml").read_text().replace("deadline_s = 120", "deadline_s = 3600")
    )
    return str(manifest)


def test_a_run_killed_at_any_boundary_resumes_to_the_same_handover(postgres_url, tmp_path):
    r42 = patient_r42(tmp_path)
    baseline = run_json("run", r42, "--db", postgres_url, "--thread", "baseline", cwd=tmp_path)
    paused = {
        point: start_paused(
            "run", r42, "--db", postgres_url, "--thread", point, point=point, cwd=tmp_path
        )
        for point in CRASH_POINTS
    }
    for process in paused.values():
        process.wait_paused()
        process.kill()
    for point in CRASH_POINTS:
        resumed = run_json("resume", point, "--db", postgres_url, cwd=tmp_path)
        if point.startswith("after:execute@"):  # the tool ran; its receipt was not saved
            assert [item.get("attempt", 1) for item in resumed["evidence"]].count(2) == 1, point
        assert_resumed_as_uncut(resumed, baseline, point, postgres_url, R42_CALLS)
        assert (
            warrant("events", point, "--verify", "--db", postgres_url, cwd=tmp_path).returncode == 0
        )


def test_a_batch_killed_mid_way_runs_each_call_once(postgres_url, tmp_path, action_file):
    reads = batch(
        "two reads",
        tool_call("a", "searchlogs", path=R42_LOG, query="UVM_ERROR"),
        tool_call("b", "readspec", path=R42_SPEC, section="reset_release"),
    )
    chooser = action_file([reads, {"summary": "stop", "message": {"kind": "stop"}}])
    baseline = run_json(
        "run", "R42", "--chooser", chooser, "--db", postgres_url, "--thread", "whole", cwd=tmp_path
    )
    process = start_paused(
        "run",
        "R42",
        "--chooser",
        chooser,
        "--db",
        postgres_url,
        "--thread",
        "cut",
        point="after:execute@b",
        cwd=tmp_path,
    )
    process.wait_paused()
    process.kill()
    resumed = run_json("resume", "cut", "--db", postgres_url, cwd=tmp_path)
    assert resumed["evidence"][1]["attempt"] == 2  # b's tool ran before the kill
    assert [item["call_id"] for item in resumed["evidence"]] == ["a", "b"]
    assert_resumed_as_uncut(resumed, baseline, "cut", postgres_url, {"a", "b"})


def terminate_lease(url: str, thread: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (lease_name(thread),),
        ).fetchall()
    return len(rows)


def test_a_lost_connection_stops_with_exit_4_and_resumes_with_nothing_lost(postgres_url, tmp_path):
    baseline = run_json("run", "R42", "--db", postgres_url, "--thread", "baseline", cwd=tmp_path)
    process = start_paused(
        "run",
        "R42",
        "--db",
        postgres_url,
        "--thread",
        "cut",
        point="after:execute@c2",
        cwd=tmp_path,
    )
    process.wait_paused()
    assert terminate_lease(postgres_url, "cut") == 1
    stopped = process.release()
    assert stopped.returncode == 4, stopped.stderr
    assert "storage failed" in stopped.stderr and "warrant resume cut" in stopped.stderr
    assert "Traceback" not in stopped.stderr
    resumed = run_json("resume", "cut", "--db", postgres_url, cwd=tmp_path)
    assert resumed["evidence"][1]["attempt"] == 2  # b's tool ran before the kill
    assert_resumed_as_uncut(resumed, baseline, "cut", postgres_url, R42_CALLS)


def test_a_stale_worker_cannot_write_after_losing_its_lease(postgres_url, tmp_path):
    stale = start_paused(
        "run", "R42", "--db", postgres_url, "--thread", "t", point="after:execute@c2", cwd=tmp_path
    )
    stale.wait_paused()
    assert terminate_lease(postgres_url, "t") == 1
    fresh = run_json("resume", "t", "--db", postgres_url, cwd=tmp_path)
    events_after_fresh = ledger("t", postgres_url)
    assert stale.release().returncode == 4
    assert ledger("t", postgres_url) == events_after_fresh
    assert_exactly_once(events_after_fresh, R42_CALLS)
    assert fresh["status"] == "stopped"


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_two_workers_on_one_thread_exactly_one_advances(backend, tmp_path, request):
    db = (
        request.getfixturevalue("postgres_url")
        if backend == "postgres"
        else str(tmp_path / "w.sqlite")
    )
    crashed = start_paused(
        "run", "R42", "--db", db, "--thread", "t", point="before:guard@2", cwd=tmp_path
    )
    crashed.wait_paused()
    crashed.kill()
    first = start_paused("resume", "t", "--db", db, point="before:execute@c2", cwd=tmp_path)
    first.wait_paused()
    second = warrant("resume", "t", "--db", db, cwd=tmp_path)
    assert second.returncode == 2
    assert (
        "being advanced elsewhere" in second.stderr and len(second.stderr.strip().splitlines()) == 1
    )
    finished = first.release()
    assert finished.returncode == 0, finished.stderr
    assert_exactly_once(ledger("t", db), R42_CALLS)


def test_a_message_id_replays_its_run_and_refuses_another_body(postgres_url, tmp_path):
    first = run_json("run", "R42", "--db", postgres_url, "--message-id", "m-1", cwd=tmp_path)
    events = ledger(first["thread_id"], postgres_url)
    again = run_json("run", "R42", "--db", postgres_url, "--message-id", "m-1", cwd=tmp_path)
    assert again == first
    assert ledger(first["thread_id"], postgres_url) == events
    conflict = warrant(
        "run",
        "R42",
        "--db",
        postgres_url,
        "--message-id",
        "m-1",
        "--goal",
        "Another question",
        cwd=tmp_path,
    )
    assert conflict.returncode == 2 and "identity conflict" in conflict.stderr
    assert ledger(first["thread_id"], postgres_url) == events


def test_a_retried_message_continues_its_unfinished_run(postgres_url, tmp_path):
    crashed = start_paused(
        "run",
        "R42",
        "--db",
        postgres_url,
        "--message-id",
        "m-2",
        point="before:guard@3",
        cwd=tmp_path,
    )
    crashed.wait_paused()
    crashed.kill()
    retried = run_json("run", "R42", "--db", postgres_url, "--message-id", "m-2", cwd=tmp_path)
    assert retried["status"] == "stopped" and len(retried["evidence"]) == len(R42_CALLS)
    assert_exactly_once(ledger(retried["thread_id"], postgres_url), R42_CALLS)


def test_thread_and_message_id_together_are_refused(tmp_path):
    result = warrant(
        "run", "R42", "--thread", "x", "--message-id", "y", "--db", "memory", cwd=tmp_path
    )
    assert result.returncode == 2 and "not both" in result.stderr


def checkpoint_rows(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return dict(
            conn.execute(
                "SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id"
            ).fetchall()
        )


def test_prune_keeps_the_latest_checkpoint_and_deletes_old_runs(postgres_url, tmp_path):
    for thread in ("a", "b"):
        run_json("run", "R42", "--db", postgres_url, "--thread", thread, cwd=tmp_path)
    assert all(count > 1 for count in checkpoint_rows(postgres_url).values())
    result = warrant("prune", "--keep-latest", "--db", postgres_url, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert checkpoint_rows(postgres_url) == {"a": 1, "b": 1}
    told = json.loads(result.stdout)
    assert told["pruned"] == ["a", "b"] and told["families_removed"] == 0  # R42 has no family
    shown = warrant("show", "a", "--db", postgres_url, "--json", cwd=tmp_path)
    assert json.loads(shown.stdout)["status"] == "stopped"
    assert warrant("prune", "--older-than", "0", "--db", postgres_url, cwd=tmp_path).returncode == 0
    assert checkpoint_rows(postgres_url) == {}
    assert warrant("show", "a", "--db", postgres_url, cwd=tmp_path).returncode == 2


def patient_r44(folder: Path) -> str:
    for part in ("runs/R44", "spec"):
        shutil.copytree(LAB_DIR / part, folder / part, dirs_exist_ok=True)
    (folder / "history").mkdir(exist_ok=True)
    shutil.copy(LAB_DIR / "history" / "nightly.csv", folder / "history")
    manifest = folder / "R44.toml"
    manifest.write_text(
        (LAB_DIR / "R44.toml").read_text().replace("deadline_s = 300", "deadline_s = 3600")
    )
    return str(manifest)


def comparable(handover: dict) -> dict:
    """A handover without what differs between two runs of R44: the thread, each child's ledger
    head (its events' times), and a child's note that a cut call ran again (checked above)."""
    handover = copy.deepcopy(handover)
    for child in handover["children"]:
        child.pop("cursor")
        child["unknowns"] = [note for note in child["unknowns"] if "the call ran" not in note]
    return without_thread(handover)


CHILD_CRASH_POINTS = [
    "after:t2/execute@c1",
    "before:t3/guard@2",
    "stored:t1/choose@2",
    "before:child",
]


def test_a_run_killed_inside_a_child_resumes_that_child_without_running_a_call_twice(
    postgres_url, tmp_path
):
    r44 = patient_r44(tmp_path)
    baseline = run_json("run", r44, "--db", postgres_url, "--thread", "base44", cwd=tmp_path)
    for point in CHILD_CRASH_POINTS:
        process = start_paused(
            "run", r44, "--db", postgres_url, "--thread", point, point=point, cwd=tmp_path
        )
        process.wait_paused()
        process.kill()
        resumed = run_json("resume", point, "--db", postgres_url, cwd=tmp_path)
        # Children run in parallel: a sibling's call in flight at the kill (its intent recorded,
        # its receipt not) runs again too, and says so; a call with a receipt never runs again.
        attempts = {item["ref"]: item.get("attempt", 1) for item in resumed["evidence"]}
        if point.startswith("after:"):
            assert attempts["E3"] == 2, point  # t2's first call: its tool ran before the kill
        assert comparable(without_reruns(resumed)) == comparable(baseline), point
        lanes = json.loads(
            warrant("events", point, "--db", postgres_url, "--json", cwd=tmp_path).stdout
        )
        executed = [
            (event["lane"], event["payload"]["call_id"])
            for event in lanes
            if event["type"] == "executed"
        ]
        assert len(executed) == len(set(executed)) == 8, point  # one receipt per call
        assert (
            warrant("events", point, "--verify", "--db", postgres_url, cwd=tmp_path).returncode == 0
        )
