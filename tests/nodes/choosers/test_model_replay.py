"""Replaying cassettes: malformed ones are refused at start, a diverging run is stopped at its turn."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from nodes.choosers.cassette import replay, write_cassette
from tests.cli_process import run_chooser
from tests.fake_openai import FakeOpenAI
from tests.helpers import run_embedded
from tests.nodes.choosers.test_model import GOOD_R42, run_model
from tests.nodes.choosers.test_model import route_env as route_env


@pytest.fixture
def cassette(route_env, tmp_path) -> Path:
    """A cassette of a good R42 investigation recorded through the real transport."""
    server = FakeOpenAI(GOOD_R42)
    route_env(server)
    path = tmp_path / "r42.jsonl"
    write_cassette(path, run_model(server)["model_calls"])
    return path


def replay_cli(path: Path, *extra: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_chooser("R42", f"replay:{path}", "--json", "-q", *extra, cwd=cwd)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"reply": [1]}\n', "line 1 is not a recorded attempt"),
        ("not json\n", "line 1 is not a recorded attempt"),
        ("\n\n", "is empty"),
    ],
)
def test_a_malformed_cassette_is_refused_before_the_run_starts(tmp_path, text, expected):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    result = replay_cli(path, cwd=tmp_path)
    assert result.returncode == 2 and expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_malformed_line_later_in_a_cassette_names_its_line(cassette, tmp_path):
    lines = cassette.read_text().splitlines()
    cassette.write_text("\n".join([*lines[:2], '{"reply": [1]}', *lines[3:]]) + "\n")
    result = replay_cli(cassette, cwd=tmp_path)
    assert result.returncode == 2 and "line 3 is not a recorded attempt" in result.stderr


def test_a_replay_for_another_goal_stops_at_the_turn_that_diverged(cassette, tmp_path):
    result = replay_cli(cassette, "--goal", "something else", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    handover = json.loads(result.stdout)
    assert handover["status"] == "model_failed" and handover["evidence"] == []
    assert "replay diverged at turn 1" in handover["chooser_stop_text"]


def test_the_same_run_replays_although_its_requests_quote_the_clock(cassette):
    state = run_embedded("R42", f"replay:{cassette}")
    assert state["status"] == "stopped" and len(state["evidence"]) == 3
    recorded = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert [call["replay_key"] for call in state["model_calls"]] == [
        call["replay_key"] for call in recorded
    ]


def test_a_cassette_that_runs_out_ends_the_run_at_once(cassette):
    cassette.write_text("".join(cassette.read_text().splitlines(keepends=True)[:2]))
    state = run_embedded("R42", f"replay:{cassette}")
    assert state["status"] == "model_failed" and len(state["model_calls"]) == 3
    assert "no response for attempt 3" in state["handover"]["chooser_stop_text"]


def test_a_cassette_spoilt_after_admission_is_a_recorded_failed_attempt(cassette):
    cassette.write_text('{"reply": [1]}\n')
    reply = replay(cassette, 0, 1, "0" * 64)
    assert reply.error is not None and "line 1 is not a recorded attempt" in reply.error
    assert reply.retryable is False


def test_a_model_run_with_children_records_and_replays_each_lane(route_env, tmp_path):
    """A child's attempts are recorded with its lane and replayed to that lane, so a run that
    delegated replays whole, with no network."""
    log = "lab/runs/R44/reset_smoke.log"
    task = {
        "id": "t1",
        "goal": "What does reset_smoke's log show?",
        "records": [log],
        "budget": {"steps": 2, "evidence": 1},
    }
    script = [
        json.dumps({"summary": "one child", "message": {"kind": "delegate", "tasks": [task]}}),
        json.dumps(
            {
                "summary": "read",
                "tool_calls": [{"id": "k1", "name": "logsummary", "args": {"path": log}}],
            }
        ),
        json.dumps({"summary": "child done", "message": {"kind": "stop", "text": "read it"}}),
        json.dumps(
            {
                "summary": "done",
                "message": {
                    "kind": "stop",
                    "text": "the child read it",
                    "hypotheses": [{"statement": "see the summary", "refs": ["E1"]}],
                },
            }
        ),
    ]
    server = FakeOpenAI(script)
    route_env(server)
    cassette = tmp_path / "r44.jsonl"
    with server.running():
        live = run_chooser("R44", "model", "--record", str(cassette), "--json", "-q", cwd=tmp_path)
    assert live.returncode == 0, live.stderr
    lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert [line.get("lane", "") for line in lines] == ["", "", "t1", "t1"]
    replayed = run_chooser("R44", f"replay:{cassette}", "--json", "-q", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    first, again = json.loads(live.stdout), json.loads(replayed.stdout)
    assert first["status"] == again["status"] == "stopped"
    keep = ("ref", "tool", "record", "sha256")
    assert [{k: item[k] for k in keep} for item in again["evidence"]] == [
        {k: item[k] for k in keep} for item in first["evidence"]
    ]
    assert again["evidence"][0]["record"] == log and len(server.requests) == 4
