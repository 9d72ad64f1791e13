"""The served boundary: a client of the LangGraph server can start runs, read them and answer
people's interactions, but cannot write the state that holds authority (a real `langgraph dev`
with Warrant's auth handlers, driven by `langgraph_sdk`)."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest
from langgraph_sdk import get_sync_client

from lab import LAB_DIR
from tests.helpers import write_manifest
from tests.langgraph_server import served_values

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

GATED = str(LAB_DIR / "R42-gated.toml")
OUTSIDE = LAB_DIR / "protected" / "design.txt"
SECRET = "PROTECTED DESIGN NOTES"


def waiting_thread(client) -> tuple[str, dict]:
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "triage", input={"scenario": GATED})
    state = client.threads.get_state(thread["thread_id"])
    assert len(state["interrupts"]) == 1, "R42-gated waits for one approval"
    return thread["thread_id"], state


def refused(call) -> str:
    with pytest.raises(httpx.HTTPStatusError) as caught:
        call()
    assert caught.value.response.status_code == 403
    return caught.value.response.text


def test_a_resume_that_widens_the_grant_is_refused_and_nothing_is_read(server_url):
    client = get_sync_client(url=server_url)
    thread_id, state = waiting_thread(client)
    grant = state["values"]["grant"]
    outside = {
        **next(iter(grant["records"].values())),
        "id": "x",
        "kind": "spec",
        "path": str(OUTSIDE),
    }
    widened = {**grant, "records": {**grant["records"], "x": outside}}
    [pending] = state["interrupts"]
    reply = {"interaction_id": pending["value"]["interaction_id"], "decision": "approve"}
    detail = refused(
        lambda: client.runs.wait(
            thread_id,
            "triage",
            command={"update": {"grant": widened}, "resume": {pending["id"]: reply}},
        )
    )
    assert "only resume" in detail
    after = client.threads.get_state(thread_id)
    assert after["values"]["grant"] == grant and after["interrupts"] == state["interrupts"]
    assert SECRET not in json.dumps(after)


def test_state_updates_and_jumps_are_refused(server_url):
    client = get_sync_client(url=server_url)
    thread_id, state = waiting_thread(client)
    refused(lambda: client.threads.update_state(thread_id, {"evidence": [{"ref": "E9"}]}))
    refused(lambda: client.runs.wait(thread_id, "triage", command={"goto": "handover"}))
    created = client.threads.create(  # the server makes the thread, refusing its state
        supersteps=[{"updates": [{"values": {"goal": "x"}, "as_node": "admit"}]}]
    )
    assert "written only by the run itself" in created["detail"]
    made = created["detail"].split()[1]  # "Thread <id> was created, but …"
    assert not client.threads.get_state(made)["values"]
    after = client.threads.get_state(thread_id)
    assert after["values"] == state["values"] and after["interrupts"] == state["interrupts"]
    client.threads.update(thread_id, metadata={"ticket": "BUG-1"})  # metadata is the client's own
    assert client.threads.get(thread_id)["metadata"]["ticket"] == "BUG-1"


def test_what_no_handler_allows_is_refused(server_url):
    """Deny by default: deleting a run's thread, a cron on a thread or for no admitted scenario,
    assistants' changes and store writes."""
    client = get_sync_client(url=server_url)
    thread_id, _ = waiting_thread(client)
    assert "append-only" in refused(lambda: client.threads.delete(thread_id))
    assert "a cron on a thread is refused" in refused(
        lambda: client.crons.create_for_thread(
            thread_id, "triage", schedule="* * * * *", input={"scenario": "R42"}
        )
    )
    assert "the cron's input is refused: unknown scenario" in refused(
        lambda: client.crons.create("triage", schedule="* * * * *", input={"scenario": "/etc"})
    )
    assert "needs a thread of its own" in refused(
        lambda: client.runs.wait(None, "triage", input={"scenario": "R42"})
    )  # thread-less: the server would delete the run's thread when it ends
    refused(lambda: client.assistants.create("triage", config={"configurable": {"x": 1}}))
    refused(lambda: client.store.put_item(("warrant", "receipts"), "k", {"v": 1}))
    refused(lambda: client.store.put_item(("notes",), "k", {"v": 1}))
    assert client.threads.get_state(thread_id)["values"]["grant"]["id"] == "R42-gated"


def test_every_served_run_is_durable_step_by_step(server_url):
    """A request for `durability="exit"` still writes each step (one checkpoint per superstep)."""
    client = get_sync_client(url=server_url)
    counts = []
    for durability in ("sync", "exit"):
        thread = client.threads.create()["thread_id"]
        client.runs.wait(thread, "triage", input={"scenario": "R42"}, durability=durability)
        counts.append(len(client.threads.get_history(thread, limit=100)))
    assert counts[0] == counts[1] > 10


def test_only_manifests_under_the_servers_roots_run_and_errors_tell_nothing_else(
    server_url,
    tmp_path_factory,
    scenario_dir,
):
    client = get_sync_client(url=server_url)
    served = tmp_path_factory.getbasetemp() / "served"
    shutil.copytree(scenario_dir, served / "cc", dirs_exist_ok=True)
    inside = write_manifest(served / "cc")
    outside = write_manifest(scenario_dir)
    messages = []
    for reference in (str(outside), str(outside.with_name("missing.toml")), "/etc/passwd"):
        thread = client.threads.create()["thread_id"]
        with pytest.raises(Exception) as caught:
            client.runs.wait(thread, "triage", input={"scenario": reference})
        messages.append(str(caught.value).replace(reference, "<ref>"))
    assert len(set(messages)) == 1 and "WARRANT_SCENARIO_ROOTS" in messages[0]
    thread = client.threads.create()["thread_id"]
    actions = served / "cc" / "stop.jsonl"
    actions.write_text('{"summary": "s", "message": {"kind": "stop", "text": "ok"}}\n')
    final = client.runs.wait(
        thread, "triage", input={"scenario": str(inside), "chooser": f"file:{actions}"}
    )
    assert final["handover"]["scenario"] == "CC"


def test_a_config_is_not_input_a_lane_given_is_refused_and_the_run_still_waits(server_url):
    """A request's config (or context) naming a child's lane, or any key the server does not set
    itself, is refused (403, before any run starts): the waiting run keeps its interrupt and a
    valid approval then runs the call."""
    client = get_sync_client(url=server_url)
    thread_id, state = waiting_thread(client)
    [pending] = state["interrupts"]
    reply = {"interaction_id": pending["value"]["interaction_id"], "decision": "approve"}
    resume = {"resume": {pending["id"]: reply}}
    for given in (
        {"config": {"configurable": {"warrant_lane": "t1"}}},
        {"context": {"warrant_lane": "t1"}},
    ):
        detail = refused(lambda: client.runs.wait(thread_id, "triage", command=resume, **given))  # noqa: B023
        assert "'warrant_lane' is refused" in detail and "routing" in detail
    for configurable in ({"__pregel_resuming": True}, {"thread_id": "another"}):
        assert "is refused" in refused(
            lambda c=configurable: client.runs.wait(
                thread_id, "triage", command=resume, config={"configurable": c}
            )
        )
    after = client.threads.get_state(thread_id)
    assert after["values"] == state["values"] and after["interrupts"] == state["interrupts"]
    final = client.runs.wait(thread_id, "triage", command=resume, headers={"x-warrant-lane": "t1"})
    assert final["handover"]["status"] == "stopped" and final["handover"]["refusals"] == []
    ledger = [event["type"] for event in served_values(client, thread_id)["events"]]
    assert "resumed" in ledger and "refused" not in ledger
