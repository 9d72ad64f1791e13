"""The web app's routes in-process (Starlette's test client on the app's own address): who sees
which run, a reader's reply refused, and the live stream of an ended run — each ledger event once,
in order, then `ended`, resuming after the sequence a reconnect names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from graph.web.app import web_app
from graph.web.gate import Gate, Person
from tests.cli_process import warrant

ROOT = Path(__file__).resolve().parents[3]
ALICE, BOB = Person("alice", "operator"), Person("bob", "reader")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("web") / "w.sqlite")
    for words in (("run", "R42", "--thread", "D"), ("run", "R42-gated", "--thread", "G")):
        ran = warrant(*words, "--db", db, "-q", cwd=ROOT)
        assert ran.returncode in (0, 3), ran.stderr
    return db


def client_of(db: str, person: Person) -> tuple[TestClient, Gate]:
    gate = Gate(8711, b"test secret", (ALICE, BOB))
    client = TestClient(web_app(db, gate), base_url="http://127.0.0.1:8711")
    opened = client.get(f"/?key={gate.key_of(person)}", follow_redirects=False)
    assert opened.status_code == 303
    return client, gate


def ledger(db: str, thread: str) -> list[int]:
    shown = warrant("events", thread, "--db", db, "--json", cwd=ROOT)
    return [event["seq"] for event in json.loads(shown.stdout)]


def test_the_operator_sees_every_run_and_a_reader_only_what_was_shared(store):
    alice, _ = client_of(store, ALICE)
    bob, _ = client_of(store, BOB)
    listing = alice.get("/").text
    assert 'id="run-D"' in listing and 'id="run-G"' in listing
    assert 'id="run-D"' not in bob.get("/").text
    refused = bob.get("/runs/D")
    assert refused.status_code == 403 and "run &#39;D&#39; was not shared with you" in refused.text
    assert bob.get("/runs/D/events").status_code == 403


def test_a_reader_may_not_reply(store):
    bob, gate = client_of(store, BOB)
    token = gate.form_token(bob.cookies[gate.cookie])
    form = {"token": token, "thread": "G", "interaction": "x", "action": "approve"}
    refused = bob.post("/reply", data=form, headers={"Origin": "http://127.0.0.1:8711"})
    assert refused.status_code == 403 and "bob reads shared runs and may not reply" in refused.text


def test_the_stream_sends_each_event_once_then_ended(store):
    alice, _ = client_of(store, ALICE)
    seqs = ledger(store, "D")

    def streamed(**headers: str) -> tuple[list[int], list[str]]:
        numbers, kinds = [], []
        with alice.stream("GET", "/runs/D/events", headers=headers) as answer:
            assert answer.headers["content-type"].startswith("text/event-stream")
            for line in answer.iter_lines():
                if line.startswith("event: "):
                    kinds.append(line.removeprefix("event: "))
                elif line.startswith("data: ") and kinds and kinds[-1] == "ledger":
                    numbers.append(json.loads(line.removeprefix("data: "))["seq"])
        return numbers, kinds

    numbers, kinds = streamed()
    assert numbers == seqs and kinds[-1] == "ended"
    resumed, _ = streamed(**{"Last-Event-ID": str(seqs[5])})
    assert resumed == seqs[6:]


def test_a_grant_opens_a_run_to_its_reader_until_it_is_withdrawn(store):
    bob, _ = client_of(store, BOB)
    artifact = "/runs/D/artifacts/handover.json"
    assert bob.get(artifact).status_code == 403
    owner = json.loads(warrant("artifacts", "D", "--db", store, "--json", cwd=ROOT).stdout)["owner"]
    shared = warrant("share", "D", "--to", "bob", "--as", owner, "--db", store, cwd=ROOT)
    assert shared.returncode == 0, shared.stderr
    assert 'id="run-D"' in bob.get("/").text and bob.get("/runs/D").status_code == 200
    assert json.loads(bob.get(artifact).text)["thread_id"] == "D"
    withdrawn = warrant(
        "share", "D", "--to", "bob", "--as", owner, "--revoke", "--db", store, cwd=ROOT
    )
    assert withdrawn.stdout == "withdrew bob's grant of run D\n"
    assert bob.get(artifact).status_code == 403 and bob.get("/runs/D").status_code == 403
