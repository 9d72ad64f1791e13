"""Served identities and forks: each API token is an identity (`WARRANT_API_TOKENS`), notes carry
it and only their author (or a memory admin) changes them; a fork from an older checkpoint is
refused at once with the fence's message. A real `langgraph dev` on SQLite, driven by
`langgraph_sdk`."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from langgraph_sdk import get_sync_client

from ledger.persistence.savers import FENCE_MESSAGE
from tests.langgraph_server import langgraph_dev

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

TOKENS = {"alice": "tok-alice-1", "bob": "tok-bob-2", "carol": "tok-carol-3"}


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("identity")
    env = {
        "WARRANT_DB": str(folder / "served.sqlite"),
        "WARRANT_API_TOKENS": ",".join(f"{who}:{token}" for who, token in TOKENS.items()),
        "WARRANT_MEMORY_ADMINS": "carol",
    }
    with langgraph_dev(folder, env) as served:
        yield served


def client_of(url: str, who: str, **headers: str):
    return get_sync_client(url=url, headers={"Authorization": f"Bearer {TOKENS[who]}", **headers})


def memory_op(client, **request: object) -> dict:
    return client.runs.wait(client.threads.create()["thread_id"], "memory", input=request)


def test_notes_carry_the_bearers_identity_and_only_their_author_changes_them(url):
    alice = client_of(url, "alice")
    bob = client_of(url, "bob", **{"X-Warrant-User": "alice"})  # a header names nobody
    carol = client_of(url, "carol")
    mine = memory_op(alice, op="save", project="lab", text="RST_CHK late", by="bob")["result"]
    theirs = memory_op(bob, op="save", project="lab", text="FIFO overflow", by="alice")["result"]
    assert (mine["by"], theirs["by"]) == ("alice", "bob")
    for op, extra in (("correct", {"text": "not late"}), ("forget", {})):
        answer = memory_op(bob, op=op, project="lab", note=mine["id"], **extra)
        assert (
            answer["error"]
            == f"note {mine['id']} was saved by alice; only they may {op} it (or a memory admin)"
        )
        assert "result" not in answer
    listed = memory_op(alice, op="list", project="lab")["result"]
    assert {note["id"]: note["version"] for note in listed} == {mine["id"]: 1, theirs["id"]: 1}
    assert (
        "may not write alice's notes"
        in memory_op(bob, op="save", project="lab", user="alice", text="x")["error"]
    )
    assert (
        memory_op(bob, op="save", project="lab", user="bob", text="mine")["result"]["by"] == "bob"
    )
    fixed = memory_op(
        alice, op="correct", project="lab", note=mine["id"], text="RST_CHK late, BUG-1"
    )
    assert fixed["result"]["version"] == 2 and fixed["result"]["by"] == "alice"
    gone = memory_op(carol, op="forget", project="lab", note=theirs["id"])["result"]  # an admin
    assert gone["state"] == "forgotten" and gone["by"] == "carol"
    shown = memory_op(alice, op="show", project="lab", note=mine["id"])["result"]
    assert [(receipt["op"], receipt["by"]) for receipt in shown] == [
        ("save", "alice"),
        ("correct", "alice"),
    ]


def test_a_request_without_a_known_token_is_refused(url):
    with pytest.raises(httpx.HTTPStatusError) as caught:
        get_sync_client(url=url, headers={"Authorization": "Bearer guess"}).threads.create()
    assert caught.value.response.status_code == 401


def test_a_fork_from_an_older_checkpoint_is_refused_at_once_with_the_fences_message(url):
    """On SQLite a fork once held the database's write lock until a worker gave up (`database is
    locked`); it is now a 403 naming the fence, before any run starts, and the thread is as it
    was."""
    client = client_of(url, "alice")
    thread = client.threads.create()["thread_id"]
    client.runs.wait(thread, "triage", input={"scenario": "R42"})
    history = client.threads.get_history(thread, limit=100)
    older = history[5]["checkpoint"]["checkpoint_id"]
    for fork in (
        {"checkpoint_id": older},
        {"checkpoint": {"checkpoint_id": older}},
        {"config": {"configurable": {"checkpoint_id": older}}},
    ):
        with pytest.raises(httpx.HTTPStatusError) as caught:
            client.runs.create(thread, "triage", input=None, **fork)
        assert caught.value.response.status_code == 403
        assert (
            FENCE_MESSAGE in caught.value.response.text
            and "never forked" in caught.value.response.text
        )
    assert client.threads.get_history(thread, limit=100) == history
    assert client.runs.list(thread)[0]["status"] == "success"


def test_a_run_is_continued_only_by_the_identity_that_started_it(url):
    alice, bob = client_of(url, "alice"), client_of(url, "bob")
    parent = alice.threads.create()["thread_id"]
    alice.runs.wait(parent, "triage", input={"scenario": "R42"})
    assert alice.threads.get_state(parent)["values"]["handover"]["status"] == "stopped"
    theirs = bob.threads.create()["thread_id"]
    run = bob.runs.create(theirs, "triage", input={"scenario": "R42", "parent": parent})
    bob.runs.join(theirs, run["run_id"])
    assert bob.runs.get(theirs, run["run_id"])["status"] == "error"
    assert "handover" not in bob.threads.get_state(theirs)["values"]
    mine = alice.threads.create()["thread_id"]
    alice.runs.wait(mine, "triage", input={"scenario": "R42", "parent": parent})
    handover = alice.threads.get_state(mine)["values"]["handover"]
    assert (handover["parent"], handover["revision"]) == (parent, 2)
    assert [item.get("carried_from", {}).get("thread") for item in handover["evidence"]][:1] == [
        parent
    ]
