"""Warrant as a LangGraph server application: a real `langgraph dev`, driven by `langgraph_sdk`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from langgraph_sdk import get_client, get_sync_client

from tests.cli_process import warrant
from tests.helpers import R42_CALLS, R42_EVENTS, R42_REFS
from tests.langgraph_server import served_values

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

ROOT = Path(__file__).resolve().parents[3]
LANGGRAPH = str(Path(sys.executable).with_name("langgraph"))


def test_a_run_started_with_only_a_scenario_id_produces_the_handover(server_url):
    client = get_sync_client(url=server_url)
    thread = client.threads.create()
    final = client.runs.wait(thread["thread_id"], "triage", input={"scenario": "R42"})
    handover = final["handover"]
    assert handover["status"] == "stopped"
    assert [item["ref"] for item in handover["evidence"]] == R42_REFS
    assert handover["thread_id"] == thread["thread_id"]
    values = served_values(client, thread["thread_id"])
    assert [event["seq"] for event in values["events"]] == list(range(1, R42_EVENTS + 1))
    assert [event["type"] for event in values["events"]].count("executing") == len(R42_CALLS)


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


def test_the_server_reads_no_chooser_file_outside_the_allowed_folders(server_url):
    """Whoever sends a run input is not the machine's user: no file of the server's is quoted."""
    client = get_sync_client(url=server_url)
    thread = client.threads.create()
    with pytest.raises(Exception, match="must lie in the scenario's folder"):
        client.runs.wait(
            thread["thread_id"], "triage", input={"scenario": "R42", "chooser": "file:/etc/passwd"}
        )
    state = client.threads.get_state(thread["thread_id"])
    assert (
        "root:" not in json.dumps(state)
        and not served_values(client, thread["thread_id"])["events"]
    )


def test_the_input_schema_asks_only_for_a_scenario(server_url):
    client = get_sync_client(url=server_url)
    assistant = client.assistants.search(graph_id="triage")[0]
    schema = client.assistants.get_schemas(assistant["assistant_id"])["input_schema"]
    assert schema["required"] == ["scenario"]
    assert set(schema["properties"]) == {
        "scenario",
        "goal",
        "chooser",
        "message_id",
        "parent",
        "schedule",  # written by the server into a cron's input (graph/server/crons.py)
    }


ASK = '{"summary": "q", "message": {"kind": "ask_user", "question": "Which seed failed first?"}}'
STOP = '{"summary": "s", "message": {"kind": "stop", "text": "ok", "hypotheses": [{"statement": "per the tester", "refs": ["H1"]}]}}'


def ask_file(folder: Path) -> str:
    path = folder / "ask.jsonl"
    path.write_text(f"{ASK}\n{STOP}\n")
    return f"file:{path}"


async def interrupted_thread(client, chooser: str) -> tuple[str, dict]:
    thread = await client.threads.create()
    await client.runs.wait(
        thread["thread_id"], "triage", input={"scenario": "R42", "chooser": chooser}
    )
    assert (await client.threads.get(thread["thread_id"]))["status"] == "interrupted"
    [pending] = (await client.threads.get_state(thread["thread_id"]))["interrupts"]
    return thread["thread_id"], pending


def test_a_question_interrupts_the_thread_and_a_resume_by_id_finishes_it(server_url, tmp_path):
    async def scenario():
        client = get_client(url=server_url)
        thread_id, pending = await interrupted_thread(client, ask_file(tmp_path))
        assert pending["value"]["kind"] == "question" and pending["value"]["thread"] == thread_id
        # a name in the body does not make the client someone else: the server's user answers
        reply = {
            "interaction_id": pending["value"]["interaction_id"],
            "answer": "seed 7",
            "by": "mallory",
        }
        await client.runs.wait(thread_id, "triage", command={"resume": {pending["id"]: reply}})
        state = await client.threads.get_state(thread_id)
        return (
            state["values"]["handover"],
            (await client.threads.get(thread_id))["status"],
            thread_id,
        )

    handover, status, thread_id = asyncio.run(scenario())
    [resumed] = [
        e
        for e in served_values(get_sync_client(url=server_url), thread_id)["events"]
        if e["type"] == "resumed"
    ]
    assert resumed["actor"] == "human:client" and resumed["payload"]["reply"]["by"] == "client"
    assert status == "idle"
    assert handover["status"] == "stopped" and handover["evidence"][0]["ref"] == "H1"
    assert handover["hypotheses"] == [{"statement": "per the tester", "refs": ["H1"]}]


def test_a_reply_for_another_interaction_is_refused_over_the_api(server_url, tmp_path):
    async def scenario():
        client = get_client(url=server_url)
        thread_id, pending = await interrupted_thread(client, ask_file(tmp_path))
        wrong = {"interaction_id": "ix-0000000000000000", "answer": "x"}
        await client.runs.wait(thread_id, "triage", command={"resume": {pending["id"]: wrong}})
        state = await client.threads.get_state(thread_id)
        return state, (await client.threads.get(thread_id))["status"], pending

    state, status, pending = asyncio.run(scenario())
    assert status == "interrupted"
    assert [(r["code"], r["owner"]) for r in state["values"]["refusals"]] == [
        ("interaction_mismatch", "human")
    ]
    assert state["interrupts"][0]["value"]["interaction_id"] == pending["value"]["interaction_id"]


def test_the_command_line_sees_the_servers_runs(server_url, module_postgres_url, tmp_path):
    async def scenario():
        return await interrupted_thread(get_client(url=server_url), ask_file(tmp_path))

    thread_id, pending = asyncio.run(scenario())
    inbox = warrant("inbox", "--db", module_postgres_url, "--json", cwd=tmp_path)
    assert pending["value"]["interaction_id"] in {
        row["interaction_id"] for row in json.loads(inbox.stdout)
    }
    done = warrant(
        "resume",
        thread_id,
        "--answer",
        "seed 7",
        "--db",
        module_postgres_url,
        "--json",
        "-q",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["evidence"][0]["excerpt"][0]["text"] == "seed 7"


def test_a_resume_for_an_unknown_interrupt_records_nothing_and_keeps_waiting(server_url, tmp_path):
    """LangGraph (without server-side strict resume) skips an answer to an interrupt that is not
    waiting; the run must neither move nor record anything. `warrant resume` refuses such a reply
    outright (tests/graph/people/test_human.py)."""

    async def scenario():
        client = get_client(url=server_url)
        thread_id, pending = await interrupted_thread(client, ask_file(tmp_path))
        reply = {"interaction_id": pending["value"]["interaction_id"], "answer": "x"}
        await client.runs.wait(thread_id, "triage", command={"resume": {"0" * 32: reply}})
        return await client.threads.get_state(thread_id), pending, thread_id

    state, pending, thread_id = asyncio.run(scenario())
    assert [item["value"]["interaction_id"] for item in state["interrupts"]] == [
        pending["value"]["interaction_id"]
    ]
    assert (
        state["values"]["refusals"] == []
        and (state["values"].get("cursor") or {}).get("answers", 0) == 0
    )
    ledger = served_values(get_sync_client(url=server_url), thread_id)["events"]
    assert [event["type"] for event in ledger].count("resumed") == 0 and ledger


def test_a_childs_approval_is_answered_over_the_api_and_resumes_that_child(
    server_url, tmp_path_factory
):
    """R44 with one gated log, served: the child's approval interrupts the thread; the SDK streams
    the children's subgraphs and answers by interrupt id."""
    from tests.graph.test_children import gated_r44

    folder = tmp_path_factory.getbasetemp() / "served" / "r44"
    folder.mkdir(parents=True, exist_ok=True)
    manifest = str(gated_r44(folder))

    async def scenario() -> tuple[set, dict, dict]:
        client = get_client(url=server_url)
        thread = await client.threads.create()
        namespaces = set()
        async for part in client.runs.stream(
            thread["thread_id"],
            "triage",
            input={"scenario": manifest},
            stream_mode="updates",
            stream_subgraphs=True,
        ):
            namespaces.add(part.event.partition("|")[2].partition(":")[0])
        [pending] = (await client.threads.get_state(thread["thread_id"]))["interrupts"]
        reply = {"interaction_id": pending["value"]["interaction_id"], "decision": "approve"}
        await client.runs.wait(
            thread["thread_id"], "triage", command={"resume": {pending["id"]: reply}}
        )
        state = await client.threads.get_state(thread["thread_id"])
        return namespaces, pending, state["values"]["handover"]

    namespaces, pending, handover = asyncio.run(scenario())
    assert "child" in namespaces  # the children's updates arrive as subgraph events
    assert pending["value"]["lane"] == "t1" and pending["value"]["kind"] == "approval"
    assert handover["status"] == "stopped"
    assert [child["lane"] for child in handover["children"]] == ["t1", "t2", "t3", "t4"]
    assert [item["lane"] for item in handover["evidence"]] == [
        "t1",
        "t1",
        "t2",
        "t2",
        "t3",
        "t3",
        "t4",
        "t4",
    ]


def test_an_agent_inbox_shaped_interrupt_is_answered_with_its_decisions(server_url, tmp_path):
    async def scenario():
        client = get_client(url=server_url)
        thread_id, pending = await interrupted_thread(client, ask_file(tmp_path))
        value = pending["value"]
        reply = {
            "interaction_id": value["interaction_id"],
            "decisions": [{"type": "respond", "message": "seed 7"}],
        }
        await client.runs.wait(thread_id, "triage", command={"resume": {pending["id"]: reply}})
        return value, (await client.threads.get_state(thread_id))["values"]["handover"]

    value, handover = asyncio.run(scenario())
    assert value["action_requests"] == [
        {
            "name": "ask_user",
            "args": {"question": "Which seed failed first?"},
            "description": "Which seed failed first?",
        }
    ]
    assert value["review_configs"] == [
        {"action_name": "ask_user", "allowed_decisions": ["respond"]}
    ]
    assert (
        handover["status"] == "stopped"
        and handover["evidence"][0]["excerpt"][0]["text"] == "seed 7"
    )


ASK_ON = '{"summary": "q", "message": {"kind": "ask_user", "question": "Which seed failed first?", "blocking": false}}'
CITE_H1 = '{"summary": "s", "message": {"kind": "stop", "text": "ok", "hypotheses": [{"statement": "per the tester", "refs": ["H1"]}]}}'


def test_a_late_answer_saved_over_the_api_reaches_a_continuation(server_url, tmp_path):
    client = get_sync_client(url=server_url)
    asking, going_on = tmp_path / "ask_on.jsonl", tmp_path / "cite.jsonl"
    asking.write_text(ASK_ON + "\n")
    going_on.write_text(CITE_H1 + "\n")
    parent = client.threads.create()["thread_id"]
    client.runs.wait(parent, "triage", input={"scenario": "R42", "chooser": f"file:{asking}"})
    [question] = client.threads.get_state(parent)["values"]["open_questions"]
    namespace = ["warrant", "runs", parent, "replies"]
    key = question["interaction_id"]
    refused = "store writes are refused, but for a reply"  # the store is the runs' own
    with pytest.raises(Exception, match=refused):
        client.store.put_item(["warrant", "runs", parent, "evidence"], "E9", {"forged": True})
    client.store.put_item(
        namespace, key, {"reply": {"interaction_id": key, "answer": "seed 7", "by": "mallory"}}
    )
    assert (
        client.store.get_item(namespace, key)["value"]["reply"]["by"] == "client"
    )  # the server's user
    child = client.threads.create()["thread_id"]
    client.runs.wait(
        child, "triage", input={"scenario": "R42", "chooser": f"file:{going_on}", "parent": parent}
    )
    handover = client.threads.get_state(child)["values"]["handover"]
    assert (handover["parent"], handover["revision"]) == (parent, 2)
    [late] = handover["evidence"]
    assert (late["ref"], late["late_for"], late["by"]) == ("H1", parent, "client")
    assert handover["hypotheses"] == [{"statement": "per the tester", "refs": ["H1"]}]


def test_memory_is_served_and_a_served_run_recalls_from_the_servers_store(server_url):
    """The `memory` graph saves into the server's store; R42-memory served recalls the note as M1,
    apart from its evidence; once forgotten over the API, a later recall finds nothing."""
    client = get_sync_client(url=server_url)

    def memory_op(**request: object) -> dict:
        return client.runs.wait(client.threads.create()["thread_id"], "memory", input=request)

    note = "RST_CHK clk_en late after release: seen in R38, R40-R42; tracked as BUG-1234"
    saved = memory_op(op="save", project="warrant-lab", text=note, signature="RST_CHK clk_en late")[
        "result"
    ]
    assert saved["by"] == "client"  # the server's user, not the body's
    thread = client.threads.create()
    handover = client.runs.wait(thread["thread_id"], "triage", input={"scenario": "R42-memory"})[
        "handover"
    ]
    assert [item["ref"] for item in handover["evidence"]] == ["E1", "E2", "E3"]
    assert [(m["ref"], m["note"], m["sha256"]) for m in handover["memory"]] == [
        ("M1", saved["id"], saved["sha256"])
    ]
    assert (
        memory_op(op="forget", project="warrant-lab", note=saved["id"])["result"]["state"]
        == "forgotten"
    )
    assert memory_op(op="search", project="warrant-lab", query="RST_CHK")["result"] == []
    assert "not a memory request" in memory_op(op="drop", project="warrant-lab")["error"]


def test_a_note_proposed_in_a_served_run_is_saved_only_when_a_person_approves_over_the_api(
    server_url, tmp_path
):
    """R42-memory served with a file chooser proposing a note: the thread interrupts with a
    `remember` interaction, nothing is saved until the approval, and then the server's user is
    its author in the server's store."""
    client = get_sync_client(url=server_url)
    note = "reset_smoke R42: clk_en late (served proposal)"
    chooser = tmp_path / "remember.jsonl"
    chooser.write_text(
        json.dumps({"summary": "keep it", "message": {"kind": "remember", "text": note}})
        + f"\n{STOP}\n"
    )
    thread = client.threads.create()["thread_id"]
    client.runs.wait(
        thread, "triage", input={"scenario": "R42-memory", "chooser": f"file:{chooser}"}
    )
    [pending] = client.threads.get_state(thread)["interrupts"]
    assert pending["value"]["kind"] == "remember"
    assert pending["value"]["action_requests"][0]["name"] == "remember"

    def search() -> list:
        run = client.runs.wait(
            client.threads.create()["thread_id"],
            "memory",
            input={"op": "search", "project": "warrant-lab", "query": "served proposal"},
        )
        return run["result"]

    assert search() == []
    reply = {"interaction_id": pending["value"]["interaction_id"], "decision": "approve"}
    final = client.runs.wait(thread, "triage", command={"resume": {pending["id"]: reply}})
    assert final["handover"]["status"] == "stopped"
    assert [(n["text"], n["by"]) for n in search()] == [(note, "client")]


@pytest.mark.parametrize("by_id", [True, False], ids=["by-interrupt-id", "bare"])
def test_a_gated_call_approved_with_the_stock_hitl_reply_runs(server_url, by_id):
    """R42-gated served: the reply LangChain's HITL middleware and Agent Inbox send names no
    interaction; the interrupt binds it to the one waiting, and the call runs, answered as the
    server's user."""
    client = get_sync_client(url=server_url)
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "triage", input={"scenario": "R42-gated"})
    [pending] = client.threads.get_state(thread_id)["interrupts"]
    stock = {"decisions": [{"type": "approve"}]}
    final = client.runs.wait(
        thread_id, "triage", command={"resume": {pending["id"]: stock} if by_id else stock}
    )
    handover = final["handover"]
    assert handover["status"] == "stopped" and handover["refusals"] == []
    assert ("E2", "readspec") in [(item["ref"], item["tool"]) for item in handover["evidence"]]
    [resumed] = [e for e in served_values(client, thread_id)["events"] if e["type"] == "resumed"]
    assert resumed["actor"] == "human:client"
    assert resumed["payload"]["reply"] == {
        "interaction_id": pending["value"]["interaction_id"],
        "decision": "approve",
        "by": "client",
    }
