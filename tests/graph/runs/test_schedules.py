"""Schedules: a person confirms recurring work (`warrant schedule add`), `warrant worker` runs each
due occurrence as a new run — its own thread, a fresh budget, a link to the schedule — that never
waits for people; a changed scenario is not run, a missed stretch runs once, an occurrence whose
predecessor is still running is skipped. Every outcome is recorded under the schedule."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from graph.runs.schedules import Schedule, due
from guards.schedule import link_of
from tests.cli_process import ledger, start_paused, warrant
from tests.graph.runs.test_recovery import patient_r42
from tests.helpers import R42_CALLS

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS_AT_SIX = "0 6 * * 1-5"
MONDAY = "2026-12-07T06:00:30+01:00"
TUESDAY = "2026-12-08T06:00:30+01:00"
CONFIRMED = "2026-12-04T12:00:00+01:00"
"""When the tests' schedules are confirmed (`schedule add --now`): the Friday before MONDAY."""
ASK = {
    "summary": "which seed?",
    "message": {"kind": "ask_user", "question": "Which seed failed?", "blocking": True},
}
STOP = {"summary": "stop", "message": {"kind": "stop", "text": "done"}}


def weekday_sixes(after: datetime, until: datetime) -> list[datetime]:
    """The reference: every weekday at 06:00 Berlin in (after, until], day by day."""
    found, day = [], after.astimezone(BERLIN).date()
    while (moment := datetime(day.year, day.month, day.day, 6, tzinfo=BERLIN)) <= until:
        if moment > after and moment.weekday() < 5:
            found.append(moment)
        day += timedelta(days=1)
    return found


def schedule(confirmed: datetime, last: str | None = None) -> Schedule:
    return Schedule(
        id="sch-000000000001",
        scenario="R42",
        manifest_sha256="0" * 64,
        cron=WEEKDAYS_AT_SIX,
        tz="Europe/Berlin",
        goal=None,
        chooser="scripted",
        confirmed_by="alice",
        confirmed_at=confirmed.timestamp(),
        last_occurrence=last,
        removed_by=None,
    )


@pytest.mark.parametrize(
    ("confirmed", "now"),
    [
        ("2026-12-04T12:00:00+01:00", "2026-12-11T07:00:00+01:00"),  # a week away: four missed
        ("2026-12-04T12:00:00+01:00", "2026-12-04T18:00:00+01:00"),  # nothing due yet
        ("2027-03-26T12:00:00+01:00", "2027-03-29T06:00:00+02:00"),  # across the clock change
        ("2026-12-07T05:00:00+01:00", "2026-12-07T06:00:00+01:00"),  # due at the very minute
    ],
)
def test_the_due_occurrence_is_the_latest_and_the_missed_ones_are_counted(confirmed, now):
    since, at = datetime.fromisoformat(confirmed), datetime.fromisoformat(now)
    expected = weekday_sixes(since, at)
    found = due(schedule(since), at)
    if not expected:
        assert found is None
        return
    assert found is not None
    assert (
        found.occurrence == expected[-1]
        and found.occurrence.utcoffset() == expected[-1].utcoffset()
    )
    assert found.missed == len(expected) - 1
    ran = schedule(since, last=found.occurrence.isoformat())
    assert due(ran, at) is None  # handled: not run again at the same time


def added(tmp_path: Path, db: str, scenario: str = "R42", *extra: str) -> str:
    confirmed = warrant(
        "schedule", "add", scenario, "--cron", WEEKDAYS_AT_SIX, "--tz", "Europe/Berlin",
        "--as", "alice", "--now", CONFIRMED, "--db", db, "--json", *extra, cwd=tmp_path,
    )  # fmt: skip
    assert confirmed.returncode == 0, confirmed.stderr
    return str(json.loads(confirmed.stdout)["id"])


def work(tmp_path: Path, db: str, now: str) -> list[dict]:
    done = warrant("worker", "--now", now, "--db", db, "--json", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def handover(tmp_path: Path, db: str, thread: str) -> dict:
    shown = warrant("show", thread, "--db", db, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout))


def test_each_occurrence_is_a_new_run_with_a_fresh_budget_and_its_link(tmp_path):
    db = str(tmp_path / "w.sqlite")
    schedule_id = added(tmp_path, db)
    monday, tuesday = work(tmp_path, db, MONDAY), work(tmp_path, db, TUESDAY)
    assert [o["outcome"] for o in monday + tuesday] == ["finished", "finished"]
    first, second = monday[0]["thread"], tuesday[0]["thread"]
    assert first != second
    assert work(tmp_path, db, TUESDAY) == []  # handled: nothing runs twice
    for thread, occurrence in (
        (first, "2026-12-07T06:00:00+01:00"),
        (second, "2026-12-08T06:00:00+01:00"),
    ):
        shown = handover(tmp_path, db, thread)
        assert shown["budget"]["steps"] == 8 and shown["status"] == "stopped"
        assert len(shown["evidence"]) == len(
            R42_CALLS
        )  # each run spent its own budget, from the start
        admitted = ledger(thread, db)[0]["payload"]
        assert admitted["schedule"] == {
            "id": schedule_id,
            "manifest_sha256": admitted["manifest_sha256"],
            "confirmed_by": "alice",
            "occurrence": occurrence,
        }
    listed = json.loads(warrant("schedule", "list", "--db", db, "--json", cwd=tmp_path).stdout)
    assert [(s["id"], s["last"]["occurrence"], s["next"]) for s in listed] == [
        (schedule_id, "2026-12-08T06:00:00+01:00", "2026-12-09T06:00:00+01:00")
    ]


def test_a_missed_stretch_runs_once(tmp_path):
    db = str(tmp_path / "w.sqlite")
    added(tmp_path, db)
    (ran,) = work(tmp_path, db, "2026-12-11T09:00:00+01:00")  # Monday to Friday missed
    assert ran["occurrence"] == "2026-12-11T06:00:00+01:00" and ran["missed"] == 4
    assert ran["outcome"] == "finished"


def test_a_scheduled_run_asks_nobody_and_reports_the_question_unknown(tmp_path, action_file):
    db = str(tmp_path / "w.sqlite")
    added(tmp_path, db, "R42", "--chooser", action_file([ASK, STOP]))
    (ran,) = work(tmp_path, db, MONDAY)
    shown = handover(tmp_path, db, ran["thread"])
    assert shown["pending"] == []
    assert (
        "Not asked: a scheduled run waits for nobody, so this question went to no one:"
        " Which seed failed?" in shown["unknowns"]
    )
    unasked = [e for e in ledger(ran["thread"], db) if e["type"] == "expired"]
    assert [e["payload"].get("unattended") for e in unasked] == [True]
    assert "Nothing is waiting" in warrant("inbox", "--db", db, cwd=tmp_path).stdout


def test_an_approval_in_a_scheduled_run_is_refused_not_waited_for(tmp_path):
    db = str(tmp_path / "w.sqlite")
    from lab import LAB_DIR

    added(tmp_path, db, str(LAB_DIR / "R42-gated.toml"))
    (ran,) = work(tmp_path, db, MONDAY)
    shown = handover(tmp_path, db, ran["thread"])
    assert shown["pending"] == []
    assert "interaction_expired" in [refusal["code"] for refusal in shown["refusals"]]


def test_a_scenario_changed_since_confirmation_is_not_run(tmp_path):
    db = str(tmp_path / "w.sqlite")
    manifest = Path(patient_r42(tmp_path))
    schedule_id = added(tmp_path, db, str(manifest))
    manifest.write_text(manifest.read_text() + "\n# widened later\n")
    (skipped,) = work(tmp_path, db, MONDAY)
    assert skipped["outcome"] == "not_run" and skipped["thread"] is None
    assert skipped["reason"].startswith(
        f"the scenario changed since alice confirmed schedule {schedule_id} (manifest sha256 "
    )
    assert skipped["reason"].endswith("confirm it again (`warrant schedule add`)")
    assert work(tmp_path, db, MONDAY) == []  # recorded once for that occurrence
    shown = warrant("schedule", "show", schedule_id, "--db", db, cwd=tmp_path).stdout
    assert "2026-12-07T06:00:00+01:00: not_run: the scenario changed" in shown


def test_a_removed_schedule_runs_no_more_and_bad_input_is_one_line(tmp_path):
    db = str(tmp_path / "w.sqlite")
    schedule_id = added(tmp_path, db)
    removed = warrant("schedule", "remove", schedule_id, "--as", "bob", "--db", db, cwd=tmp_path)
    assert removed.stdout.strip() == f"schedule {schedule_id} removed by bob"
    assert work(tmp_path, db, MONDAY) == []
    assert "No schedules" in warrant("schedule", "list", "--db", db, cwd=tmp_path).stdout
    for args, message in (
        (("schedule", "remove", "sch-nope"), "error: no schedule 'sch-nope': see `warrant schedule list`"),
        (("schedule", "add", "R42", "--cron", "6am"), "error: --cron '6am' is not a cron expression (five fields: m h dom mon dow)"),
        (("schedule", "add", "R42", "--cron", "0 6 * * *", "--tz", "Berlin/Mitte"), "error: --tz 'Berlin/Mitte' is not a time zone name (e.g. Europe/Berlin, UTC)"),
        (("schedule", "add", "R4", "--cron", "0 6 * * *"), "error: unknown scenario 'R4'"),
        (("worker", "--now", "2026-12-07T06:00"), "error: --now '2026-12-07T06:00' has no UTC offset (e.g. +01:00 or Z)"),
    ):  # fmt: skip
        bad = warrant(*args, "--db", db, cwd=tmp_path)
        assert bad.returncode == 2 and bad.stderr.startswith(message), bad.stderr
        assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"id": True, "manifest_sha256": "0" * 64, "confirmed_by": "a"}, "id is missing or malformed"),
        ({"id": "s", "manifest_sha256": "x", "confirmed_by": "a"}, "manifest_sha256 is missing or malformed"),
        ({"id": "s", "manifest_sha256": "0" * 64, "confirmed_by": ""}, "names no one who confirmed it"),
        ({"id": "s", "manifest_sha256": "0" * 64, "confirmed_by": "a", "occurrence": "2026-12-07T06:00"}, "has no UTC offset"),
        ({"id": "s", "manifest_sha256": "0" * 64, "confirmed_by": "a", "budget": 100}, "unknown fields: budget"),
        ("sch-1", "must be an object"),
    ],
)  # fmt: skip
def test_a_schedule_link_in_a_run_input_is_strictly_typed(given, problem):
    with pytest.raises(ValueError, match=problem):
        link_of(given)


@pytest.mark.slow  # a worker paused mid-run in another process
def test_an_occurrence_whose_predecessor_still_runs_is_skipped_and_a_cut_one_finishes(tmp_path):
    db = str(tmp_path / "w.sqlite")
    added(tmp_path, db, patient_r42(tmp_path))
    busy = start_paused(
        "worker", "--now", MONDAY, "--db", db, "-q", point="before:guard@2", cwd=tmp_path
    )
    busy.wait_paused()
    (skipped,) = work(tmp_path, db, TUESDAY)
    assert skipped["outcome"] == "skipped" and skipped["thread"] is None
    assert skipped["reason"].startswith(
        "the occurrence at 2026-12-07T06:00:00+01:00 is still running"
    )
    busy.kill()  # the worker dies mid-run: the next pass takes the run on to its handover
    (finished,) = work(tmp_path, db, TUESDAY)
    assert finished["occurrence"] == "2026-12-07T06:00:00+01:00"
    assert finished["outcome"] == "finished"
    shown = handover(tmp_path, db, finished["thread"])
    assert [item["call_id"] for item in shown["evidence"]] == R42_CALLS


def test_wake_schedule_continue_and_retry_are_four_different_things(tmp_path):
    """docs/control.md's table, each row on one store: a reply wakes the same run; a schedule
    starts a new one; `continue` starts a linked one; a retried send finds the same run."""
    from lab import LAB_DIR

    db = str(tmp_path / "w.sqlite")
    gated = str(LAB_DIR / "R42-gated.toml")
    assert warrant("run", gated, "--db", db, "--thread", "g", "-q", cwd=tmp_path).returncode == 3
    woken = warrant(
        "resume", "g", "--approve", "--as", "alice", "--db", db, "--json", "-q", cwd=tmp_path
    )
    assert woken.returncode == 0, woken.stderr
    assert json.loads(woken.stdout)["thread_id"] == "g"  # wake: the same run goes on
    first = warrant("run", "R42", "--message-id", "m-1", "--db", db, "--json", "-q", cwd=tmp_path)
    again = warrant("run", "R42", "--message-id", "m-1", "--db", db, "--json", "-q", cwd=tmp_path)
    assert json.loads(first.stdout)["thread_id"] == json.loads(again.stdout)["thread_id"]  # retry
    assert (
        len(
            [
                e
                for e in ledger(json.loads(first.stdout)["thread_id"], db)
                if e["type"] == "admitted"
            ]
        )
        == 1
    )
    linked = warrant("continue", "g", "--db", db, "--json", "-q", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    continued = json.loads(linked.stdout)
    assert continued["thread_id"] != "g"
    assert ledger(continued["thread_id"], db)[0]["payload"]["parent"] == "g"  # continue: linked
    added(tmp_path, db)
    (occurrence,) = work(tmp_path, db, MONDAY)
    assert occurrence["thread"] not in ("g", continued["thread_id"])
    admitted = ledger(occurrence["thread"], db)[0]["payload"]
    assert "parent" not in admitted and admitted["schedule"]["confirmed_by"] == "alice"  # new
