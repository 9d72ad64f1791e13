"""The model chooser from the command line: recovery without re-asking, cassettes, endpoints."""

from __future__ import annotations

import json
import os

import pytest

from lab import LAB_DIR
from scenario.registry import load_scenario
from tests.cli_process import run_chooser, start_paused, warrant, without_thread
from tests.fake_openai import MODEL, FakeOpenAI
from tests.nodes.choosers.test_model import GOOD_R42


def model_env(server: FakeOpenAI) -> dict[str, str]:
    return {
        "WARRANT_MODEL": MODEL,
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "test-key",
        "WARRANT_MODEL_BACKOFF": "0.01",
    }


@pytest.mark.slow  # a real process killed mid-run (kill -9), as the slow suite's kill trials are
def test_a_crash_after_the_reply_is_recorded_does_not_ask_the_model_again(tmp_path):
    db = str(tmp_path / "w.sqlite")
    server = FakeOpenAI(GOOD_R42)
    with server.running():
        crashed = start_paused(
            "run",
            "R42",
            "--chooser",
            "model",
            "--db",
            db,
            "--thread",
            "t",
            point="before:guard@2",
            cwd=tmp_path,
            env=model_env(server),
        )
        crashed.wait_paused()
        crashed.kill()
        assert len(server.requests) == 2
        resumed = warrant(
            "resume", "t", "--db", db, "--json", "-q", cwd=tmp_path, env=model_env(server)
        )
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == 4, "turn 2's recorded reply was reused, not requested again"
    handover = json.loads(resumed.stdout)
    assert [item["ref"] for item in handover["evidence"]] == ["E1", "E2", "E3"]


def test_a_recorded_cassette_replays_the_run_without_network(tmp_path):
    cassette = tmp_path / "r42.jsonl"
    server = FakeOpenAI(GOOD_R42)
    with server.running():
        live = run_chooser(
            "R42",
            "model",
            "--record",
            str(cassette),
            "--json",
            "-q",
            cwd=tmp_path,
            env=model_env(server),
        )
    assert live.returncode == 0, live.stderr
    assert len(cassette.read_text().splitlines()) == 4
    replayed = run_chooser(
        "R42",
        f"replay:{cassette}",
        "--json",
        "-q",
        cwd=tmp_path,
        env={"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
    )
    assert replayed.returncode == 0, replayed.stderr
    assert without_thread(json.loads(replayed.stdout)) == without_thread(json.loads(live.stdout))


@pytest.mark.parametrize(
    ("env", "code", "said", "one_line"),
    [
        pytest.param({"WARRANT_MODEL": ""}, 2, "WARRANT_MODEL", False, id="no-model"),
        pytest.param(
            {"WARRANT_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
            4,
            "unreachable",
            False,
            id="unreachable",
        ),
        pytest.param(
            {"WARRANT_MODEL": "m", "OPENAI_BASE_URL": "not-a-url"},
            2,
            "not an http(s) URL",
            True,
            id="not-a-url",
        ),
    ],
)
def test_the_model_chooser_needs_a_model_and_a_reachable_endpoint(
    tmp_path, env, code, said, one_line
):
    refused = run_chooser("R42", "model", cwd=tmp_path, env=env)
    assert refused.returncode == code and said in refused.stderr
    assert "Traceback" not in refused.stderr
    if one_line:
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr


LIVE = all(os.environ.get(name) for name in ("WARRANT_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"))


@pytest.mark.skipif(
    not LIVE,
    reason="set WARRANT_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY to run against a real endpoint",
)
def test_a_live_model_completes_a_bounded_run_under_the_guard(tmp_path):
    result = run_chooser("R42", "model", "--json", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    handover = json.loads(result.stdout)
    assert handover["status"] in {
        "stopped",
        "step_budget_exhausted",
        "model_failed",
        "deadline_passed",
        "refusal_limit",
    }
    approved = set(load_scenario(LAB_DIR / "R42.toml").records)
    assert all(
        item["record"] in approved for item in handover["evidence"] if item["kind"] == "observation"
    )
    assert "PROTECTED DESIGN NOTES" not in result.stdout


def test_an_unusable_reply_on_every_attempt_is_a_handover_not_a_traceback(tmp_path):
    server = FakeOpenAI(
        [{"body": {"error": {"message": "model overloaded", "type": "server_error"}}}] * 3
    )
    with server.running():
        result = run_chooser("R42", "model", "--json", "-q", cwd=tmp_path, env=model_env(server))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    handover = json.loads(result.stdout)
    assert (
        handover["status"] == "model_failed" and "model overloaded" in handover["chooser_stop_text"]
    )


def test_a_busy_endpoint_is_reachable_a_closed_port_is_not():
    """A one-slot local server (llama.cpp) accepts the connection and answers after its current
    request: the run is admitted and its attempts wait under their own timeouts."""
    import socket

    from nodes.choosers.route import Route
    from nodes.choosers.transport import probe

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        url = f"http://127.0.0.1:{busy.getsockname()[1]}/v1"
        # accepted, never answered: busy (waiting the 5 s a run gives it would show nothing more)
        assert probe(Route(model="m", base_url=url, locality="local"), timeout_s=0.5) is None
    closed = probe(Route(model="m", base_url="http://127.0.0.1:1/v1", locality="local"))
    assert closed is not None and "unreachable" in closed
