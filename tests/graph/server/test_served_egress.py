"""Served runs keep local records local: the LangGraph server's own LangSmith traces go through the
hiding client (a real `langgraph dev` tracing to a collector started here, which keeps every body
it is sent), and a served continuation cannot carry a finished run's receipts into another
scenario's grant."""

from __future__ import annotations

import json
import time

import pytest
from langgraph_sdk import get_sync_client

from tests.helpers import local_log_scenario
from tests.langgraph_server import langgraph_dev
from tests.langsmith_collector import collector

pytestmark = pytest.mark.slow  # real processes: a server

CANARY = "Qz7servedcanary"


def test_a_served_run_is_traced_to_langsmith_without_a_byte_of_a_local_record(
    tmp_path, postgres_url
):
    manifest, actions = local_log_scenario(tmp_path / "served" / "local", CANARY)
    with collector() as (endpoint, kept):
        env = {
            "WARRANT_DB": postgres_url,
            "WARRANT_CHOOSER_DIR": str(tmp_path),
            "WARRANT_SCENARIO_ROOTS": str(tmp_path / "served"),
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": endpoint,
            "LANGSMITH_API_KEY": "lsv2_pt_test",
        }
        with langgraph_dev(tmp_path, env) as url:
            client = get_sync_client(url=url)
            thread = client.threads.create()["thread_id"]
            client.runs.wait(
                thread, "triage", input={"scenario": str(manifest), "chooser": f"file:{actions}"}
            )
            state = client.threads.get_state(thread)["values"]
            assert state["handover"]["status"] == "stopped"
            deadline = time.monotonic() + 60  # the server sends its traces in the background
            while time.monotonic() < deadline and not any(thread.encode() in body for body in kept):
                time.sleep(0.2)
    traced = b"\n".join(kept)
    assert thread.encode() in traced, "the served run was traced"
    assert b"hidden_keys" in traced, "through the hiding client"
    assert CANARY.encode() not in traced


def test_a_served_continuation_of_another_scenarios_run_is_refused(server_url, tmp_path):
    client = get_sync_client(url=server_url)
    actions = tmp_path / "read.jsonl"
    search = {
        "id": "c1",
        "name": "searchlogs",
        "args": {"path": "lab/runs/R42/reset_smoke.log", "query": "RST_CHK"},
    }
    actions.write_text(
        json.dumps({"summary": "read", "tool_calls": [search]})
        + "\n"
        + json.dumps({"summary": "done", "message": {"kind": "stop", "text": "read"}})
        + "\n"
    )
    parent = client.threads.create()["thread_id"]
    client.runs.wait(parent, "triage", input={"scenario": "R42", "chooser": f"file:{actions}"})
    assert client.threads.get_state(parent)["values"]["handover"]["evidence"]
    other = client.threads.create()["thread_id"]
    run = client.runs.create(
        other, "triage", input={"scenario": "R43", "chooser": "scripted", "parent": parent}
    )
    client.runs.join(other, run["run_id"])
    finished = client.runs.get(other, run["run_id"])
    assert finished["status"] == "error"
    values = client.threads.get_state(other)["values"]
    # nothing of R42 carried into R43
    assert not values.get("evidence") and "handover" not in values
