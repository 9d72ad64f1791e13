"""LangGraph crons on a Warrant server are schedules their creator confirms: the cron's input is
admitted at creation and linked to it (the manifest's sha256, who confirmed it); each occurrence is a
new run on its own thread that waits for nobody; only the creator sees or deletes the cron; a
changed scenario is not run. A real `langgraph dev` (its cron scheduler looking every second),
driven by `langgraph_sdk`."""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from lab import LAB_DIR
from tests.helpers import R42_CALLS, R42_PARTS
from tests.langgraph_server import langgraph_dev, served_values

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

TOKENS = {"alice": "tok-alice-9", "bob": "tok-bob-10"}
EVERY_MINUTE = "* * * * *"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("served-crons")
    roots = folder / "scenarios"
    roots.mkdir()
    for part in R42_PARTS:
        shutil.copytree(LAB_DIR / part, roots / part)
    shutil.copy(LAB_DIR / "R42.toml", roots / "R42.toml")
    env = {
        "WARRANT_DB": str(folder / "served.sqlite"),
        "WARRANT_API_TOKENS": ",".join(f"{who}:{token}" for who, token in TOKENS.items()),
        "WARRANT_SCENARIO_ROOTS": str(roots),
        "CRON_SCHEDULER_SLEEP_TIME": "1",
    }
    with langgraph_dev(folder, env) as url:
        yield url, roots / "R42.toml"


def client_of(url: str, who: str):
    return get_sync_client(url=url, headers={"Authorization": f"Bearer {TOKENS[who]}"})


def occurrence_of(client, cron_id: str, timeout: float = 150) -> dict:
    """The first ended run of the cron: found among the caller's threads by its schedule link."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for thread in client.threads.search(limit=100):
            values = thread.get("values") or {}
            linked = (values.get("schedule") or {}).get("id") == f"cron:{cron_id}"
            if linked and "handover" in values and thread["status"] == "idle":
                return served_values(client, thread["thread_id"])
            if linked and thread["status"] == "error":
                return {"error": client.runs.list(thread["thread_id"])[0], "thread": thread}
        time.sleep(1)
    raise AssertionError(f"no occurrence of cron {cron_id} ended")


def test_a_cron_is_a_confirmed_schedule_its_occurrences_new_runs(served):
    url, manifest = served
    alice, bob = client_of(url, "alice"), client_of(url, "bob")
    cron = alice.crons.create(
        "triage",
        schedule=EVERY_MINUTE,
        input={"scenario": str(manifest)},
        metadata={"warrant_owner": "bob"},
    )
    cron_id = cron["cron_id"]
    assert [c["cron_id"] for c in alice.crons.search()] == [cron_id]
    assert bob.crons.search() == []  # not bob's, whatever the metadata given said
    with pytest.raises(httpx.HTTPStatusError) as caught:
        bob.crons.delete(cron_id)
    assert caught.value.response.status_code == 404
    with pytest.raises(httpx.HTTPStatusError) as changed:
        alice.crons.update(cron_id, schedule="0 6 * * *")
    assert changed.value.response.status_code == 403
    values = occurrence_of(alice, cron_id)
    link = values["schedule"]
    assert link["id"] == f"cron:{cron_id}" and link["confirmed_by"] == "alice"
    assert link["manifest_sha256"] == values["grant"]["manifest_sha256"]
    handover = values["handover"]
    assert handover["status"] == "stopped" and not values.get("pending")  # nobody waited
    assert handover["budget"]["steps"] == 8 and len(handover["evidence"]) == len(R42_CALLS)
    alice.crons.delete(cron_id)
    assert alice.crons.search() == []
    forged = {"scenario": "R42", "schedule": link}  # a plain run posing as the cron's occurrence
    with pytest.raises(httpx.HTTPStatusError) as posing:
        alice.runs.wait(alice.threads.create()["thread_id"], "triage", input=forged)
    assert posing.value.response.status_code == 403
    assert "never given" in posing.value.response.json()["detail"]


def test_a_cron_whose_scenario_changed_runs_nothing(served):
    url, manifest = served
    alice = client_of(url, "alice")
    changed = manifest.with_name("R42-later.toml")
    changed.write_text(manifest.read_text())
    cron = alice.crons.create("triage", schedule=EVERY_MINUTE, input={"scenario": str(changed)})
    changed.write_text(changed.read_text() + "\n# widened after the confirmation\n")
    failed = occurrence_of(alice, cron["cron_id"])
    alice.crons.delete(cron["cron_id"])
    assert "error" in failed, "the changed scenario ran"
    assert failed["error"]["status"] == "error"
    state = alice.threads.get_state(failed["thread"]["thread_id"])["values"]
    assert "grant" not in state and "turn" not in state  # nothing admitted, nothing read


def test_a_client_neither_links_a_run_to_a_cron_nor_configures_a_cron(served):
    """`cron_id` is the server's: a run that sets it is refused, whoever's cron it names; a cron
    whose config a run would be refused for is refused when created."""
    url, manifest = served
    alice, bob = client_of(url, "alice"), client_of(url, "bob")
    cron = alice.crons.create("triage", schedule="0 6 * * *", input={"scenario": str(manifest)})
    try:
        link = {
            "id": f"cron:{cron['cron_id']}",
            "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
            "confirmed_by": "alice",
        }
        posed = {"scenario": str(manifest), "schedule": link}  # alice's occurrence, as bob
        for who, given in ((bob, posed), (alice, {"scenario": "R42"})):
            thread = who.threads.create()["thread_id"]
            with pytest.raises(httpx.HTTPStatusError) as posing:
                who.runs.wait(
                    thread,
                    "triage",
                    input=given,
                    config={"configurable": {"cron_id": cron["cron_id"]}},
                )
            assert posing.value.response.status_code == 403
            assert "cron_id" in posing.value.response.json()["detail"]
            assert who.threads.get_state(thread)["values"] == {}  # no run started
        for config in ({"configurable": {"warrant_lane": "t1"}}, {"recursion_limit": 5}):
            with pytest.raises(httpx.HTTPStatusError) as configured:
                alice.crons.create(
                    "triage", schedule="0 6 * * *", input={"scenario": "R42"}, config=config
                )
            assert configured.value.response.status_code == 403
        assert [c["cron_id"] for c in alice.crons.search()] == [cron["cron_id"]]
    finally:
        alice.crons.delete(cron["cron_id"])
