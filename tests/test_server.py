"""Warrant as a LangGraph server application: a real `langgraph dev`, driven by `langgraph_sdk`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH = str(Path(sys.executable).with_name("langgraph"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(url: str, server: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"langgraph dev did not answer at {url}")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory) -> Iterator[str]:
    port = free_port()
    log = (tmp_path_factory.mktemp("server") / "langgraph.log").open("w")
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    server = subprocess.Popen(
        [LANGGRAPH, "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, server)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def test_a_run_started_with_only_a_scenario_id_produces_the_handover(server_url):
    client = get_sync_client(url=server_url)
    thread = client.threads.create()
    final = client.runs.wait(thread["thread_id"], "triage", input={"scenario": "R42"})
    handover = final["handover"]
    assert handover["status"] == "stopped"
    assert [item["ref"] for item in handover["evidence"]] == ["E1", "E2", "E3"]
    assert handover["thread_id"] == thread["thread_id"]
    state = client.threads.get_state(thread["thread_id"])
    assert [event["seq"] for event in state["values"]["events"]] == list(range(1, 14))


def test_the_server_guards_a_file_chooser_the_same_way(server_url, tmp_path):
    actions = tmp_path / "a.jsonl"
    actions.write_text(
        '{"summary": "s", "tool_calls": [{"id": "c1", "name": "readspec", "args": {"path": "lab/protected/design.txt", "section": "x"}}]}\n'
    )
    client = get_sync_client(url=server_url)
    thread = client.threads.create()
    final = client.runs.wait(
        thread["thread_id"], "triage", input={"scenario": "R42", "chooser": f"file:{actions}"}
    )
    assert [(r["code"], r["owner"]) for r in final["handover"]["refusals"]] == [
        ("unapproved_record", "tool:readspec")
    ]
    assert final["handover"]["evidence"] == []


def test_the_input_schema_asks_only_for_a_scenario(server_url):
    client = get_sync_client(url=server_url)
    assistant = client.assistants.search(graph_id="triage")[0]
    schema = client.assistants.get_schemas(assistant["assistant_id"])["input_schema"]
    assert schema["required"] == ["scenario"]
    assert set(schema["properties"]) == {"scenario", "goal", "chooser", "message_id"}
