"""Served runs keep local records local: the LangGraph server's own LangSmith traces go through the
hiding client (a real `langgraph dev` tracing to a collector started here, which keeps every body
it is sent), and a served continuation cannot carry a finished run's receipts into another
scenario's grant."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import zstandard
from langgraph_sdk import get_sync_client

from tests.helpers import local_log_scenario
from tests.langgraph_server import langgraph_dev

pytestmark = pytest.mark.slow  # real processes: a server

CANARY = "Qz7servedcanary"


class _Collector(BaseHTTPRequestHandler):
    """A stand-in for LangSmith's API: answers everything, keeps every body (decompressed)."""

    bodies: list[bytes]

    def do_GET(self) -> None:
        self._answer(b"{}")

    def do_POST(self) -> None:
        self._keep()

    do_PATCH = do_PUT = do_POST

    def _keep(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        encoding = self.headers.get("content-encoding", "")
        if "zstd" in encoding:
            body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
        elif "gzip" in encoding:
            body = gzip.decompress(body)
        self.bodies.append(self.path.encode() + b"\n" + body)
        self._answer(b"{}")

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def collector() -> Iterator[tuple[str, list[bytes]]]:
    kept: list[bytes] = []
    handler = type("Handler", (_Collector,), {"bodies": kept})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", kept
    finally:
        server.shutdown()


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
