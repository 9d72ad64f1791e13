"""Every multitask strategy of the LangGraph server keeps the ledger's promise: a second run sent
to a thread whose run is in flight is refused or finishes it, and every approved call has exactly
one receipt. A real `langgraph dev` whose nodes pause before the first call runs
(`graph/crashpoints.py`), so the second run always arrives while that call is in flight."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.cli_process import warrant
from tests.helpers import R42_CALLS, R42_REFS
from tests.langgraph_server import (
    handover_of,
    paused_dev,
    release,
    run_until_paused,
    served_values,
)

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

POINT = "before:execute@c1"


@pytest.fixture(scope="module")
def paused_server(tmp_path_factory, module_postgres_url) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("multitask")
    with paused_dev(folder, POINT, {"WARRANT_DB": module_postgres_url}) as served:
        yield served


def in_flight(url: str, signal_file: Path) -> tuple[object, str]:
    """A thread whose R42 run has its first call approved and about to run."""
    client = get_sync_client(url=url)
    return client, run_until_paused(client, signal_file)[0]


def assert_promise_kept(values: dict) -> None:
    """Each approved call ran once, its receipt numbered in order; the run ended stopped."""
    events = values["events"]
    approved = [e["payload"]["call"]["id"] for e in events if e["type"] == "approved"]
    executed = Counter(e["payload"]["call_id"] for e in events if e["type"] == "executed")
    assert approved == R42_CALLS and executed == Counter(dict.fromkeys(R42_CALLS, 1))
    assert [(item["ref"], item["call_id"]) for item in values["handover"]["evidence"]] == list(
        zip(R42_REFS, R42_CALLS, strict=True)
    )
    assert values["handover"]["status"] == "stopped"
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))


def thread_in_use(values: dict) -> int:
    return sum(e["payload"].get("code") == "thread_in_use" for e in values["events"])


def assert_finished_once(client: Any, thread: str, *, refused_in_use: int) -> None:
    """The run on `thread` kept its promise, the second input refused `refused_in_use` times as
    `thread_in_use`."""
    values = handover_of(client, thread)
    assert_promise_kept(values)
    assert thread_in_use(values) == refused_in_use


def test_interrupt_finishes_the_approved_call_instead_of_losing_it(paused_server):
    url, signal_file = paused_server
    client, thread = in_flight(url, signal_file)
    client.runs.create(thread, "triage", input={"scenario": "R42"}, multitask_strategy="interrupt")
    release(signal_file)
    assert_finished_once(client, thread, refused_in_use=1)


def test_enqueue_lets_the_run_finish_then_refuses_the_second_input(paused_server):
    url, signal_file = paused_server
    client, thread = in_flight(url, signal_file)
    second = client.runs.create(
        thread, "triage", input={"scenario": "R42"}, multitask_strategy="enqueue"
    )
    release(signal_file)
    client.runs.join(thread, second["run_id"])
    assert_finished_once(client, thread, refused_in_use=1)


def test_reject_and_rollback_are_refused_and_the_run_finishes(paused_server):
    url, signal_file = paused_server
    client, thread = in_flight(url, signal_file)
    with pytest.raises(httpx.HTTPStatusError) as rejected:
        client.runs.create(thread, "triage", input={"scenario": "R42"}, multitask_strategy="reject")
    assert rejected.value.response.status_code == 409
    with pytest.raises(httpx.HTTPStatusError) as rolled:
        client.runs.create(
            thread, "triage", input={"scenario": "R42"}, multitask_strategy="rollback"
        )
    assert (
        rolled.value.response.status_code == 403
        and "never rolled back" in rolled.value.response.text
    )
    release(signal_file)
    assert_finished_once(client, thread, refused_in_use=0)


def test_a_served_run_and_warrant_resume_at_once_advance_the_run_once(
    paused_server, module_postgres_url, tmp_path
):
    """The served run holds no lease; the checkpoint fence still lets only one of them write."""
    url, signal_file = paused_server
    client, thread = in_flight(url, signal_file)
    resumed = warrant("resume", thread, "--db", module_postgres_url, "--json", "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    release(signal_file)  # the served run goes on from the checkpoint the CLI already advanced
    deadline = time.monotonic() + 60
    while client.runs.list(thread)[0]["status"] in ("pending", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert client.runs.list(thread)[0]["status"] == "error"  # fenced out, nothing written
    values = served_values(client, thread)
    assert_promise_kept(values)
    cli = json.loads(resumed.stdout)
    assert [item["ref"] for item in cli["evidence"]] == R42_REFS
    assert values["handover"]["evidence"] == cli["evidence"]
