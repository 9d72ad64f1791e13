"""Retries against a scripted endpoint: backoff, Retry-After, statuses not retried, the deadline.

The waits between attempts are asked of a fake clock (`FakeClock.sleep`), which keeps them and
moves at once: what is checked is the wait the run asked for and recorded, never how long the
test took. The deadline's cut of an attempt in flight is the real transport's, against the real
clock: that is checked by what the run recorded (the attempt's error, the status)."""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAI
from tests.helpers import FakeClock, write_manifest
from tests.nodes.choosers.test_model import STOP, run_model
from tests.nodes.choosers.test_model import route_env as route_env


def waits(state: dict) -> list[float]:
    return [call["waited_s"] for call in state["model_calls"]]


def test_retries_back_off_exponentially(route_env):
    server = FakeOpenAI([{"status": 500}, {"status": 503}, STOP])
    route_env(server, backoff="0.2")
    clock = FakeClock()
    state = run_model(server, context=clock.context())
    assert state["status"] == "stopped" and len(server.requests) == 3
    assert clock.slept == pytest.approx([0.2, 0.4])
    assert waits(state) == [0, 0.2, 0.4]


def test_retry_after_is_honoured_and_recorded(route_env):
    limited = {"status": 429, "headers": {"Retry-After": "0.5"}}
    server = FakeOpenAI([limited] * 3)
    route_env(server)  # backoff 0.01: the waits come from Retry-After
    clock = FakeClock()
    state = run_model(server, context=clock.context())
    assert state["status"] == "model_failed" and len(server.requests) == 3
    assert clock.slept == pytest.approx([0.5, 0.5])
    assert state["model_calls"][0]["reply"]["retry_after_s"] == 0.5
    assert waits(state) == [0, 0.5, 0.5]


def test_a_long_retry_after_is_capped(route_env):
    server = FakeOpenAI([{"status": 429, "headers": {"Retry-After": "3600"}}, STOP])
    route_env(server, backoff_max="0.3")
    clock = FakeClock()
    state = run_model(server, context=clock.context())
    assert state["status"] == "stopped" and len(server.requests) == 2
    assert clock.slept == pytest.approx([0.3]) and waits(state) == [0, 0.3]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_a_status_no_retry_can_change_ends_the_run_at_once(route_env, status):
    server = FakeOpenAI([{"status": status}, STOP])
    route_env(server)
    state = run_model(server)
    assert state["status"] == "model_failed" and len(server.requests) == 1
    assert f"HTTP {status}" in state["handover"]["chooser_stop_text"]
    assert "test-key" not in str(state)


def short_deadline(scenario_dir, seconds: int) -> str:
    manifest = write_manifest(scenario_dir)
    manifest.write_text(manifest.read_text().replace("deadline_s = 120", f"deadline_s = {seconds}"))
    return str(manifest)


def test_a_hanging_endpoint_is_cut_at_the_deadline(route_env, scenario_dir):
    """The endpoint would answer STOP after 30 s: an attempt recorded as timed out, and no
    second one, is an attempt cut at the 2 s deadline (the route's own timeout is 60 s)."""
    server = FakeOpenAI([{"content": STOP, "delay": 30}] * 3)
    route_env(server)
    state = run_model(server, short_deadline(scenario_dir, 2))
    assert state["status"] == "deadline_passed" and len(server.requests) == 1
    assert state["model_calls"][0]["reply"]["error"].startswith("timeout after")
    assert [refusal["code"] for refusal in state["refusals"]] == ["deadline_passed"]


def test_a_wait_never_runs_past_the_deadline(route_env, scenario_dir):
    server = FakeOpenAI([{"status": 429, "headers": {"Retry-After": "60"}}, STOP])
    route_env(server, backoff_max="60")
    clock = FakeClock()
    state = run_model(server, short_deadline(scenario_dir, 2), context=clock.context())
    assert state["status"] == "deadline_passed" and len(server.requests) == 1
    # The 60 s asked for were cut to the 2 s left (the run then waits out the deadline's last
    # instant, so that the guard finds it passed).
    assert clock.slept[0] == pytest.approx(2.0) and sum(clock.slept) < 2.01
    assert waits(state) == [0]


def test_an_endpoint_that_trickles_its_reply_is_cut_at_the_deadline(route_env, scenario_dir):
    """Each quarter of the body comes within the SDK's read timeout (2 s, the deadline's
    remaining seconds rounded up); the whole (6 s) does not: the attempt is given up at the
    deadline, said so ("for the whole response"), and no second attempt is sent. A quarter slower
    than the read timeout would race the SDK's own timeout against the whole response's."""
    server = FakeOpenAI([{"content": STOP, "trickle": 1.5}] * 3)
    route_env(server)
    state = run_model(server, short_deadline(scenario_dir, 2))
    assert state["status"] == "deadline_passed" and len(server.requests) == 1
    assert state["model_calls"][0]["reply"]["error"].endswith("for the whole response")
