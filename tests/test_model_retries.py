"""Retries against a scripted endpoint: backoff, Retry-After, statuses not retried, the deadline."""

from __future__ import annotations

import time

import pytest

from tests.fake_openai import FakeOpenAI
from tests.helpers import write_manifest
from tests.test_model import STOP, run_model
from tests.test_model import route_env as route_env


def gaps(server: FakeOpenAI) -> list[float]:
    return [later - earlier for earlier, later in zip(server.times, server.times[1:], strict=False)]


def test_retries_back_off_exponentially(route_env):
    server = FakeOpenAI([{"status": 500}, {"status": 503}, STOP])
    route_env(server, backoff="0.2")
    state = run_model(server)
    assert state["status"] == "stopped"
    first, second = gaps(server)
    assert 0.2 <= first < 0.4 <= second < 0.8
    assert state["model_calls"][0]["waited_s"] == 0 < state["model_calls"][1]["waited_s"]


def test_retry_after_is_honoured_and_recorded(route_env):
    limited = {"status": 429, "headers": {"Retry-After": "0.5"}}
    server = FakeOpenAI([limited] * 3)
    route_env(server)  # backoff 0.01: the waits come from Retry-After
    state = run_model(server)
    assert state["status"] == "model_failed" and len(server.requests) == 3
    assert all(gap >= 0.5 for gap in gaps(server))
    assert state["model_calls"][0]["reply"]["retry_after_s"] == 0.5
    assert state["model_calls"][1]["waited_s"] >= 0.49


def test_a_long_retry_after_is_capped(route_env):
    server = FakeOpenAI([{"status": 429, "headers": {"Retry-After": "3600"}}, STOP])
    route_env(server, backoff_max="0.3")
    started = time.monotonic()
    state = run_model(server)
    assert state["status"] == "stopped" and 0.3 <= gaps(server)[0] < 60
    assert time.monotonic() - started < 120  # far below the hour asked for, on any machine


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
    server = FakeOpenAI([{"content": STOP, "delay": 30}] * 3)
    route_env(server)  # the route's timeout stays 60 s: the deadline cuts the attempt
    started = time.monotonic()
    state = run_model(server, short_deadline(scenario_dir, 2))
    assert time.monotonic() - started < 20  # cut: the endpoint hangs for 30 s
    assert state["status"] == "deadline_passed" and len(server.requests) == 1
    assert state["model_calls"][0]["reply"]["error"].startswith("timeout after")
    assert [refusal["code"] for refusal in state["refusals"]] == ["deadline_passed"]


def test_a_wait_never_runs_past_the_deadline(route_env, scenario_dir):
    server = FakeOpenAI([{"status": 429, "headers": {"Retry-After": "60"}}, STOP])
    route_env(server, backoff_max="60")
    started = time.monotonic()
    state = run_model(server, short_deadline(scenario_dir, 2))
    assert 1.5 < time.monotonic() - started < 40  # cut: the endpoint asked for 60 s
    assert state["status"] == "deadline_passed" and len(server.requests) == 1


def test_an_endpoint_that_trickles_its_reply_is_cut_at_the_deadline(route_env, scenario_dir):
    """Each quarter of the body comes within the SDK's read timeout (2 s, the deadline's
    remaining seconds rounded up); the whole does not. A quarter slower than the read timeout
    would race the SDK's own timeout against the whole response's."""
    server = FakeOpenAI([{"content": STOP, "trickle": 1.5}] * 3)
    route_env(server)
    started = time.monotonic()
    state = run_model(server, short_deadline(scenario_dir, 2))
    assert time.monotonic() - started < 5.5  # cut: the whole body takes 6 s
    assert state["status"] == "deadline_passed" and len(server.requests) == 1
    assert state["model_calls"][0]["reply"]["error"].endswith("for the whole response")
