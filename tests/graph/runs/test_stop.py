"""`warrant stop`: a person ends a run at its next safe point — a parked run at once, a run another
process is advancing at its next turn (a call in flight completes and is receipted), a run cut
short by a crash when it is taken up; the handover says `stopped`, by whom and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab import LAB_DIR
from tests.cli_process import ledger, run_json, start_paused, warrant
from tests.graph.runs.test_recovery import patient_r42

GATED = str(LAB_DIR / "R42-gated.toml")


def stopped_by(handover: dict, by: str, reason: str) -> bool:
    stop = handover.get("stopped_by") or {}
    return handover["status"] == "stopped" and stop.get("by") == by and stop.get("reason") == reason


def test_a_parked_run_stops_at_once_and_what_it_asked_is_withdrawn(tmp_path):
    db = str(tmp_path / "w.sqlite")
    parked = warrant("run", GATED, "--db", db, "--thread", "g", "--quiet", cwd=tmp_path)
    assert parked.returncode == 3  # waiting for a person's approval
    stopped = warrant(
        "stop", "g", "--reason", "wrong seed", "--as", "alice", "--db", db, "--json", cwd=tmp_path
    )
    assert stopped.returncode == 0, stopped.stderr
    handover = json.loads(stopped.stdout)
    assert stopped_by(handover, "alice", "wrong seed")
    assert handover["ending"] == "stopped"
    assert handover["ending_reasons"] == ["alice stopped the run: wrong seed"]
    assert handover["pending"] == [] and handover["refusals"] == []
    assert any("stopped by alice (wrong seed)" in unknown for unknown in handover["unknowns"])
    assert "Nothing is waiting" in warrant("inbox", "--db", db, cwd=tmp_path).stdout
    events = ledger("g", db)
    kinds = [event["type"] for event in events]
    assert kinds[-4:] == ["expired", "stop_requested", "stopped", "handover"]
    assert events[-4]["payload"]["withdrawn"] is True
    assert events[-3]["actor"] == "human:alice"
    shown = warrant("show", "g", "--db", db, cwd=tmp_path).stdout
    assert "**Stopped by:** alice at " in shown and "“wrong seed”" in shown


def test_an_ended_or_unknown_run_cannot_be_stopped(tmp_path):
    db = str(tmp_path / "w.sqlite")
    assert warrant("run", "R42", "--db", db, "--thread", "done", "-q", cwd=tmp_path).returncode == 0
    ended = warrant("stop", "done", "--db", db, cwd=tmp_path)
    assert ended.returncode == 2
    assert ended.stderr.strip() == (
        "error: run 'done' already ended (completed): see `warrant show done`"
    )
    assert (
        json.loads(warrant("show", "done", "--db", db, "--json", cwd=tmp_path).stdout).get(
            "stopped_by"
        )
        is None
    )  # nothing recorded on a finished run
    missing = warrant("stop", "nope", "--db", db, cwd=tmp_path)
    assert missing.returncode != 0 and missing.stderr.startswith("error: no run with thread id")
    bad = warrant("stop", "done", "--as", "bob smith", "--db", db, cwd=tmp_path)
    assert bad.returncode == 2 and "is not a user name" in bad.stderr


@pytest.mark.slow  # a real process advancing the run while another stops it
@pytest.mark.parametrize("point", ["before:choose@2", "before:execute@c2"])
def test_a_run_advanced_elsewhere_stops_at_its_next_safe_point(postgres_url, tmp_path, point):
    """Paused before its second choice, or with its second call in flight: the stop is
    recorded, the run goes on to its next guard and ends there; a call in flight is receipted.
    (The guard sees the stop as the step before it read it, in its checkpoint's round trip.)"""
    r42 = patient_r42(tmp_path)
    process = start_paused(
        "run", r42, "--db", postgres_url, "--thread", "s", "--json", point=point, cwd=tmp_path
    )
    process.wait_paused()
    asked = warrant(
        "stop", "s", "--reason", "enough", "--as", "bob", "--db", postgres_url, cwd=tmp_path
    )
    assert asked.returncode == 0, asked.stderr
    assert "stops at its next safe point" in asked.stdout
    finished = process.release()
    assert finished.returncode == 0, finished.stderr
    handover = json.loads(finished.stdout)
    assert stopped_by(handover, "bob", "enough")
    calls = ["c1", "c2"] if point.startswith("before:execute") else ["c1"]
    assert [item["call_id"] for item in handover["evidence"]] == calls  # none lost
    assert all(item["error"] is None for item in handover["evidence"])
    again = run_json("resume", "s", "--db", postgres_url, cwd=tmp_path)  # not busy, not resumable
    assert again == handover


@pytest.mark.slow  # a run killed mid-way, stopped before anyone resumed it
def test_a_run_cut_short_by_a_crash_is_stopped_when_taken_up(postgres_url, tmp_path):
    r42 = patient_r42(tmp_path)
    process = start_paused(
        "run", r42, "--db", postgres_url, "--thread", "k", point="before:choose@2", cwd=tmp_path
    )
    process.wait_paused()
    process.kill()
    stopped = warrant("stop", "k", "--as", "carol", "--db", postgres_url, "--json", cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    handover = json.loads(stopped.stdout)
    assert stopped_by(handover, "carol", "")
    assert [item["call_id"] for item in handover["evidence"]] == ["c1"]
    assert (
        warrant("events", "k", "--verify", "--db", postgres_url, cwd=Path(tmp_path)).returncode == 0
    )
