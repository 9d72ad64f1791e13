"""`warrant web` over a served deployment's database: a run started through the LangGraph server
(`warrant serve` on PostgreSQL) is listed and shown, its artifacts belong to the caller who
started it, and reach another person only through that caller's grant. Real server, real HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.cli_process import warrant
from tests.graph.server.test_scale_out import serving, shared  # noqa: F401  (the fixture)
from tests.web_inbox_server import served_web

pytestmark = pytest.mark.slow


def session(url: str) -> httpx.Client:
    client = httpx.Client(timeout=60)
    opened = client.get(url, follow_redirects=False)
    assert opened.status_code == 303
    return client


def test_a_served_run_is_shown_and_shared_by_its_caller(shared):  # noqa: F811
    with serving(shared, "a", WARRANT_API_TOKENS="alice:tok-alice") as replica:
        client = get_sync_client(url=replica.url, headers={"Authorization": "Bearer tok-alice"})
        thread = client.threads.create()["thread_id"]
        run = client.runs.create(thread, "triage", input={"scenario": "R42"})
        client.runs.join(thread, run["run_id"])
    with served_web(shared.database, "--as", "carol", "--reader", "alice") as web:
        carol, alice = session(web.openings["carol"]), session(web.openings["alice"])
        assert re.search(rf'<tr id="run-{thread}">', carol.get(f"{web.url}/").text)
        page = carol.get(f"{web.url}/runs/{thread}")
        assert page.status_code == 200 and "Handover: R42" in page.text
        artifact = f"{web.url}/runs/{thread}/artifacts/handover.md"
        refused = carol.get(artifact)
        assert refused.status_code == 403
        assert "only its owner (alice) or a reader it was shared with" in refused.text
        assert thread in alice.get(f"{web.url}/").text  # a reader sees the runs she started
        own = alice.get(artifact)
        assert own.status_code == 200 and own.text.startswith("# Handover: R42")
        shared_now = warrant(
            "share",
            thread,
            "--to",
            "carol",
            "--as",
            "alice",
            "--db",
            shared.database,
            cwd=Path.cwd(),
        )
        assert shared_now.returncode == 0, shared_now.stderr
        assert carol.get(artifact).text == own.text
        carol.close()
        alice.close()
