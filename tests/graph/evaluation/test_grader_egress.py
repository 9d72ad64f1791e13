"""The grader keeps local records local. A run that read a `share = "local"` record is graded by a
remote route (a fake OpenAI-compatible server started here, which keeps every request body) that
receives none of what the run's chooser, children or people wrote — its stop text, hypotheses,
ending reasons, unknowns, questions, answers — only references, each counted in the request's record.
The canary is shorter than the egress gate's window, so only that structural withholding keeps it
back. And the grader's own model call is never traced to LangSmith by the default client: a
`warrant eval` with LangSmith tracing on, sending to a collector started here, delivers no canary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graph.evaluation.grader import grade
from graph.evaluation.grader_view import RunFacts
from graph.evaluation.suite import Rubric
from guards.egress import WINDOW, Outbound
from nodes.choosers.route import Route
from nodes.choosers.transport import Reply
from tests.cli_process import warrant
from tests.fake_openai import MODEL, FakeOpenAI
from tests.helpers import LOCAL_LOG_SCENARIO
from tests.langsmith_collector import collector

ROOT = Path(__file__).resolve().parents[3]
CANARY = "Vq7Zk"
"""Shorter than the gate's window: a copy of it is caught only by withholding by structure."""
assert len(CANARY) < WINDOW
MANIFEST = LOCAL_LOG_SCENARIO.replace("steps = 4", "steps = 6")
VERDICT = json.dumps({"verdict": "unknown", "reason": "withheld"})


def local_run(root: Path, canary: str) -> tuple[Path, Path]:
    """A scenario of one local log carrying `canary`, and a chooser that reads it, asks a person
    about it without waiting, and stops saying it: (suite, log)."""
    log = root / "t.log"
    log.write_text(f"UVM_ERROR tb/top.sv(4) @ 10: env [{canary}] overflow\nTEST FAILED\n")
    (root / "scenario.toml").write_text(MANIFEST)
    search = {"id": "c1", "name": "searchlogs", "args": {"path": "lo/t.log", "query": "UVM_ERROR"}}
    said = f"env {canary} overflowed"
    documents = [
        {"summary": "search", "tool_calls": [search]},
        {
            "summary": "ask",
            "message": {"kind": "ask_user", "question": f"Is {canary} it?", "blocking": False},
        },
        {
            "summary": "stop",
            "message": {
                "kind": "stop",
                "text": said,
                "hypotheses": [{"statement": said, "refs": ["E1"]}],
            },
        },
    ]
    actions = root / "read.jsonl"
    actions.write_text("".join(json.dumps(document) + "\n" for document in documents))
    suite = root / "suite.toml"
    suite.write_text(
        f'[[case]]\nid = "local"\nscenario = "{root / "scenario.toml"}"\n'
        f'chooser = "file:{actions}"\n[case.expect]\nstatus = "stopped"\n'
        '[[case.rubric]]\nname = "cites"\nquestion = "Does each statement cite evidence?"\n'
    )
    return suite, log


def test_a_remote_grader_gets_no_word_of_a_chooser_that_read_a_local_record(tmp_path):
    suite, log = local_run(tmp_path, CANARY)
    db = str(tmp_path / "w.sqlite")
    grader = FakeOpenAI([VERDICT])
    env = grader.env("WARRANT_GRADER_MODEL", WARRANT_MODEL_LOCALITY="remote")
    with grader.running():
        result = warrant("eval", str(suite), "--json", "--db", db, cwd=tmp_path, env=env)
    assert result.returncode in (0, 1), result.stderr
    (row,) = json.loads(result.stdout)
    shown = warrant("show", row["threads"][0], "--db", db, "--json", cwd=tmp_path)
    handover = json.loads(shown.stdout)
    # Ground truth: the canary is the local log's, and the run's own words carry it in every
    # channel a remote grader was sent before.
    assert CANARY in log.read_text()
    assert any(CANARY in reason for reason in handover["ending_reasons"])
    assert any(CANARY in unknown for unknown in handover["unknowns"])
    assert CANARY in handover["chooser_stop_text"]
    assert len(grader.requests) == 1
    assert CANARY not in json.dumps(grader.requests[0])
    prompt = grader.prompts[0]
    assert "lo/t.log" in prompt and '"E1"' in prompt  # by reference, still citable
    assert "The chooser ended the investigation: [withheld" in prompt
    (check,) = [c for c in row["judged"][0]["checks"] if c["name"] == "rubric: cites"]
    egress = check["record"]["egress"]
    # the stop text, one hypothesis, one ending reason, one unknown and the item's excerpt
    fields = {item["field"] for item in egress["withheld"]}
    assert {"chooser_stop_text", "hypotheses[0].statement", "ending_reasons[0]"} <= fields
    assert "unknowns[1]" in fields and "evidence[0]" in fields
    assert egress["withheld_fields"] == len(egress["withheld"])
    assert CANARY not in json.dumps(check["record"]["request"])


REMOTE = Route(model="grader", locality="remote")
RECORDS = {"r/local": {"share": "local"}, "r/shared": {"share": "any"}}


def every_channel(canary: str) -> dict[str, Any]:
    """A handover with `canary` in every field a chooser, a child or a person writes."""
    local = {
        "ref": "E1",
        "kind": "observation",
        "tool": "searchlogs",
        "args": {"path": "r/local", "query": canary},
        "record": "r/local",
        "sources": [{"record": "r/local"}],
        "summary": f"1 line contains {canary}",
        "excerpt": [{"line": 1, "text": f"ERROR {canary}"}],
    }
    shared = {
        "ref": "E2",
        "kind": "observation",
        "call_id": f"c_{canary}",  # a name the chooser gave
        "tool": "searchlogs",
        "args": {"path": "r/shared", "query": f"near {canary}"},
        "record": "r/shared",
        "sources": [{"record": "r/shared"}],
        "summary": f"0 lines contain 'near {canary}'",
        "excerpt": [{"line": 3, "text": "plainshared line"}],
        "computed": {"query": f"SELECT '{canary}'", "rows": [[canary]]},
    }
    answer = {
        "ref": "H1",
        "kind": "human_answer",
        "tool": "ask_user",
        "args": {"question": f"is {canary} it?"},
        "record": None,
        "sources": [],
        "summary": "a person's answer",
        "excerpt": [{"line": 1, "text": f"yes, {canary}"}],
    }
    return {
        "scenario": "S",
        "goal": "Why did fifo_smoke fail?",
        "status": "stopped",
        "evidence": [local, shared, answer],
        "unknowns": [
            "Root cause: not established. This handover reports evidence and what remains unknown.",
            f"A question to a person went unanswered in time: {canary}?",
            f"E1: {canary}",
        ],
        "ending_reasons": [f"The chooser ended the investigation: {canary}"],
        "refusals": [
            {
                "turn": 2,
                "code": "unapproved_record",
                "owner": "guard",
                "detail": f"record {canary} is not approved",
                "call": {"id": "c2", "name": "readspec", "args": {"path": canary}},
            },
            {
                "turn": 3,
                "code": "unknown_tool",
                "owner": "guard",
                "detail": "no such tool",
                "call": {"id": f"c_{canary}", "name": canary, "args": {}},
            },
        ],
        "hypotheses": [{"statement": f"it is {canary}", "refs": ["E1", f"E9{canary}"]}],
        "chooser_stop_text": f"done: {canary}",
        "stopped_by": {"by": "ana", "reason": f"saw {canary}"},
        "children": [
            {
                "order": 0,
                "lane": canary,
                "task": canary,
                "goal": f"look for {canary}",
                "status": "stopped",
                "evidence": ["E1"],
                "statements": [{"statement": canary, "refs": ["E1"], "by": "child:t1"}],
                "unknowns": [f"E1: {canary}"],
                "stop_text": canary,
                "refusals": [],
            }
        ],
        "pending": [{"interaction_id": "ix-1", "records": ["r/local"], "question": f"{canary}?"}],
        "memory": [{"ref": "M1", "note": "m-1", "query": canary, "text": canary, "share": "local"}],
        "a_field_added_later": canary,
    }


def graded(handover: dict[str, Any], route: Route = REMOTE) -> tuple[Any, list[Outbound]]:
    sent: list[Outbound] = []

    def sender(route: Route, outbound: Outbound, **_: Any) -> Reply:
        sent.append(outbound)
        return Reply(VERDICT)

    rubric = Rubric(name="cites", question="Does it cite?")
    return grade(rubric, handover, route, RunFacts(RECORDS), sender), sent


def test_every_channel_a_chooser_child_or_person_writes_is_withheld_from_a_remote_grader():
    check, sent = graded(every_channel(CANARY))
    assert len(sent) == 1 and CANARY not in sent[0].text
    assert CANARY not in json.dumps(check.record["request"])
    assert "plainshared line" in sent[0].text  # a shareable record's lines still go
    assert "Root cause: not established" in sent[0].text
    assert '"name": "readspec"' in sent[0].text  # a refused call's tool, when it is one
    withheld = {item["field"] for item in check.record["egress"]["withheld"]}
    assert {"evidence[0]", "evidence[2]", "unknowns[1]", "unknowns[2]"} <= withheld
    assert {"refusals[0].detail", "children[0].goal", "a_field_added_later"} <= withheld
    assert all(len(item["sha256"]) == 64 for item in check.record["egress"]["withheld"])


def test_a_run_that_read_nothing_local_is_graded_whole():
    handover = every_channel(CANARY)
    handover["evidence"] = handover["evidence"][1:2]  # only the shareable item
    del handover["memory"]
    check, sent = graded(handover)
    assert f"it is {CANARY}" in sent[0].text
    assert check.record["egress"]["withheld"] == []


def test_a_local_grader_sees_the_whole_handover():
    local = Route(model="grader", locality="local")
    check, sent = graded(every_channel(CANARY), local)
    assert f"done: {CANARY}" in sent[0].text and check.record["egress"]["withheld"] == []


def test_the_graders_call_is_never_traced_by_the_default_langsmith_client(tmp_path):
    """A local grader may see the canary; LangSmith, a remote service, may not. `warrant eval`
    runs as a process of its own, so LangSmith's client is made from this environment."""
    canary = "Tq4graderlangsmithcanary"
    suite, _ = local_run(tmp_path, canary)
    grader = FakeOpenAI([VERDICT])
    with collector() as (endpoint, kept), grader.running():
        env = {
            "PYTHONPATH": str(ROOT),  # this checkout's code, whatever the venv was installed from
            "WARRANT_GRADER_MODEL": MODEL,
            "OPENAI_BASE_URL": grader.url,
            "OPENAI_API_KEY": "k",
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": endpoint,
            "LANGSMITH_API_KEY": "lsv2_pt_test",
        }
        result = warrant("eval", str(suite), "--json", cwd=tmp_path, env=env, subprocess_=True)
    assert result.returncode in (0, 1), result.stderr
    assert len(grader.requests) == 1 and canary in grader.prompts[0]  # the local grader saw it
    traced = b"\n".join(kept)
    assert b"hidden_keys" in traced, "the run itself was traced, through the hiding client"
    assert canary.encode() not in traced


def test_a_model_choosers_request_reaches_langsmith_only_through_the_hiding_client(tmp_path):
    """`warrant run --chooser model` on a local route with LangSmith tracing on: the route sees
    the local record; LangSmith, a remote service, never does."""
    canary = "Tq4chooserlangsmithcanary"
    local_run(tmp_path, canary)
    manifest = tmp_path / "scenario.toml"
    search = {"id": "c1", "name": "searchlogs", "args": {"path": "lo/t.log", "query": "UVM_ERROR"}}
    replies = [
        json.dumps({"summary": "read it", "tool_calls": [search]}),
        json.dumps({"summary": "s", "message": {"kind": "stop", "text": "done"}}),
    ]
    route = FakeOpenAI(replies)
    with collector() as (endpoint, kept), route.running():
        env = {
            "PYTHONPATH": str(ROOT),
            "WARRANT_MODEL": MODEL,
            "WARRANT_MODEL_LOCALITY": "local",
            "OPENAI_BASE_URL": route.url,
            "OPENAI_API_KEY": "k",
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": endpoint,
            "LANGSMITH_API_KEY": "lsv2_pt_test",
        }
        command = ("run", str(manifest), "--chooser", "model", "--db", "memory", "-q")
        result = warrant(*command, cwd=tmp_path, env=env, subprocess_=True)
    assert result.returncode == 0, result.stderr
    assert canary in route.prompts[-1]  # the local route saw it
    traced = b"\n".join(kept)
    assert b"hidden_keys" in traced, "the run was traced, through the hiding client"
    assert canary.encode() not in traced
