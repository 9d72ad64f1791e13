"""A family call's progress over the SDK: a real `langgraph dev` streams it in LangGraph's `custom`
mode as the call reads its members, the same payloads the console shows, and no ledger holds it.
A run started in the background with `custom` among its modes is replayed by `join_stream`; one
started without it never published any (what a caller saw as "`custom` gives nothing")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from graph.runs.requests import admit_request
from graph.runs.runner import PROGRESS, start
from lab.nightly import write_nightly
from tests.cli_process import warrant
from tests.langgraph_server import served_values
from tools.logs import familypool

pytestmark = pytest.mark.slow  # a real server

LOGS = 150
"""More members than percents: the call tells each whole percent once, 0 to 100."""
GOAL = "Which tests failed?"


@pytest.fixture(scope="module")
def nightly(tmp_path_factory) -> tuple[str, int]:
    """A generated nightly's manifest (under the server's scenario roots), and its family's size
    counted from the folder: the logs `runs/N7/*.log` matches."""
    folder = tmp_path_factory.getbasetemp() / "served" / "progress"
    write_nightly(folder, logs=LOGS, member_bytes=4_000)
    assert warrant("scenario", "new", str(folder), cwd=folder.parent).returncode == 0
    members = [
        path.name
        for path in (folder / "runs" / "N7").iterdir()
        if path.is_file() and path.name.endswith(".log") and not path.name.startswith(".")
    ]
    return str(folder / "scenario.toml"), len(members)


def progress_of(parts: Any) -> list[dict[str, Any]]:
    """The progress payloads among a stream's parts; anything else `custom` carried fails."""
    told = []
    for part in parts:
        assert part.event != "error", part.data
        if part.event.partition("|")[0] == "custom":
            assert set(part.data) == {"progress"}, part.data
            told.append(part.data["progress"])
    return told


def console_progress(manifest: str, tmp_path: Path) -> list[dict[str, Any]]:
    """What `warrant run` shows of the same run's progress: the runner's progress events, run in
    this process on a store of its own."""
    events: list[dict[str, Any]] = []
    request = admit_request(manifest, GOAL, "scripted", f"console-{tmp_path.name}", None)
    try:
        start(request, "memory", events.append)
    finally:
        familypool.shutdown_pools()
    return [event["payload"] for event in events if event["type"] == PROGRESS]


def test_a_family_calls_progress_streams_as_the_console_shows_it_and_no_ledger_holds_it(
    server_url, nightly, tmp_path
):
    manifest, members = nightly
    client = get_sync_client(url=server_url)
    thread = client.threads.create()["thread_id"]
    run_input = {"scenario": manifest, "goal": GOAL}
    told = progress_of(
        client.runs.stream(thread, "triage", input=run_input, stream_mode=["custom", "updates"])
    )
    dones = [entry["done"] for entry in told]
    assert dones == sorted(set(dones)) and dones[-1] == members
    assert {entry["total"] for entry in told} == {members}
    assert [done * 100 // members for done in dones] == list(range(101))
    values = served_values(client, thread)
    receipt = values["handover"]["evidence"][0]
    assert receipt["tool"] == "triage" and receipt["family"]["members"] == members
    assert {(entry["turn"], entry["call_id"], entry["ref"], entry["tool"]) for entry in told} == {
        (receipt["turn"], receipt["call_id"], receipt["ref"], "triage")
    }
    ledger = values["events"]
    assert "executed" in {event["type"] for event in ledger}
    assert [event for event in ledger if event["type"] == PROGRESS] == []
    assert [event for event in ledger if {"done", "total"} <= set(event.get("payload", {}))] == []
    alone = client.threads.create()["thread_id"]  # the call: `custom` and nothing else
    assert progress_of(client.runs.stream(alone, "triage", input=run_input, stream_mode="custom"))
    assert told == console_progress(manifest, tmp_path)


def test_a_background_run_replays_its_progress_only_when_started_with_custom(server_url, nightly):
    manifest, members = nightly
    client = get_sync_client(url=server_url)
    run_input = {"scenario": manifest, "goal": GOAL}
    replayed = {}
    for modes in (["custom"], None):
        thread = client.threads.create()["thread_id"]
        run = client.runs.create(
            thread, "triage", input=run_input, stream_mode=modes, stream_resumable=True
        )
        client.runs.join(thread, run["run_id"])
        parts = client.runs.join_stream(thread, run["run_id"], last_event_id="0")
        replayed[str(modes)] = progress_of(parts)
    assert [entry["done"] for entry in replayed["['custom']"]][-1] == members
    assert len(replayed["['custom']"]) == 101
    assert replayed["None"] == []  # created with the default `values`: nothing to join
