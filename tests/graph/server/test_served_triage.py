"""A nightly triaged by a real `langgraph dev` (its members read in the server's own process pool)
gives exactly the receipt an embedded run gives, and the baseline runs there with no chooser."""

from __future__ import annotations

import pytest
from langgraph_sdk import get_sync_client

from lab.nightly import write_nightly
from tests.cli_process import warrant
from tests.helpers import run_embedded
from tools.logs import familypool

pytestmark = pytest.mark.slow  # a real server

SAME = ("tool", "args", "record", "sha256", "family", "summary", "excerpt", "unknowns")
"""What a receipt says of its reading (its ref, turn and body reference may differ)."""


def test_a_served_nightly_gives_the_embedded_receipt_exactly(server_url, tmp_path_factory):
    folder = tmp_path_factory.getbasetemp() / "served" / "nightly"
    write_nightly(folder, logs=120, member_bytes=20_000)
    assert warrant("scenario", "new", str(folder), cwd=folder.parent).returncode == 0
    manifest = str(folder / "scenario.toml")
    client = get_sync_client(url=server_url)
    thread = client.threads.create()
    served = client.runs.wait(
        thread["thread_id"], "triage", input={"scenario": manifest, "goal": "Which failed?"}
    )["handover"]
    try:
        embedded = run_embedded(manifest, goal="Which failed?")["handover"]
    finally:
        familypool.shutdown_pools()
    assert served["status"] == embedded["status"] == "stopped"
    first = served["evidence"][0]
    assert first["tool"] == "triage" and first["family"]["members"] == 120
    assert {key: first.get(key) for key in SAME} == {
        key: embedded["evidence"][0].get(key) for key in SAME
    }
    assert [item["tool"] for item in served["evidence"]] == [
        item["tool"] for item in embedded["evidence"]
    ]
    assert served["hypotheses"] == embedded["hypotheses"]
