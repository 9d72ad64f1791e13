"""Native tool calls map into the action document the guard parses, through the real transport.

A reply of OpenAI `tool_calls` is taken as the document they state, recorded as that text, and
decided by the same guard as a text document; malformed calls are refused, never repaired; a
reply cut short is a failed attempt, never a call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from nodes.choosers.cassette import write_cassette
from tests.fake_openai import FakeOpenAI
from tests.helpers import R42_HISTORY, R42_LOG, R42_SPEC, run_embedded
from tests.nodes.choosers.test_model import GOOD_R42, STOP, run_model
from tests.nodes.choosers.test_model import route_env as route_env

PROTECTED = "lab/protected/design.txt"


def native(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """A native tool call as OpenAI sends it: the arguments as JSON text."""
    return raw(call_id, name, json.dumps(args))


def raw(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def document(summary: str, *calls: dict[str, Any]) -> str:
    """The text document equivalent to `calls`."""
    return json.dumps(
        {
            "summary": summary,
            "tool_calls": [
                {
                    "id": item["id"],
                    "name": item["function"]["name"],
                    "args": json.loads(item["function"]["arguments"]),
                }
                for item in calls
            ],
        }
    )


SEARCH = native("call_s1", "searchlogs", path=R42_LOG, query="RST_CHK", limit=5)
DESIGN = native("call_d1", "readspec", path=PROTECTED, section="reset")
SPEC = native("call_r1", "readspec", path=R42_SPEC, section="reset_release")
HISTORY = native("call_h1", "getrunhistory", path=R42_HISTORY, test="reset_smoke")
PROSE = "Reading the specification and the run history."
NATIVE_R42: list[str | dict[str, Any]] = [
    {"tool_calls": [SEARCH]},
    {"tool_calls": [DESIGN]},
    {"content": PROSE, "tool_calls": [SPEC, HISTORY]},
    STOP,
]
"""R42 with every call native: one each, one on the protected design notes, two with prose."""
TEXT_R42: list[str | dict[str, Any]] = [
    document("native tool calls: searchlogs", SEARCH),
    document("native tool calls: readspec", DESIGN),
    document(PROSE, SPEC, HISTORY),
    STOP,
]
"""The same investigation as text documents."""


def events_of(state: dict, kind: str) -> list[dict]:
    return [event for event in state["events"] if event["type"] == kind]


def outcome(state: dict) -> dict[str, Any]:
    """What the guard and the tools made of a run, whoever proposed it."""
    return {
        "status": state["status"],
        "evidence": [(e["ref"], e["call_id"], e["record"]) for e in state["evidence"]],
        "refusals": [(r["turn"], r["code"], r["owner"], r["detail"]) for r in state["refusals"]],
        "proposed": [event["payload"]["raw"] for event in events_of(state, "proposed")],
    }


@pytest.mark.parametrize("stream", ["false", "true"])
def test_native_calls_are_the_action_document_the_guard_decides(route_env, stream):
    server = FakeOpenAI(NATIVE_R42)
    route_env(server, stream=stream)
    state = run_model(server)
    found = outcome(state)
    assert found["evidence"] == [
        ("E1", "call_s1", R42_LOG),
        ("E2", "call_r1", R42_SPEC),
        ("E3", "call_h1", R42_HISTORY),
    ]
    assert [(turn, code, owner) for turn, code, owner, _ in found["refusals"]] == [
        (2, "unapproved_record", "tool:readspec")
    ]
    replies = [attempt["reply"] for attempt in state["model_calls"]]
    assert [reply["error"] for reply in replies] == [None] * 4
    assert found["proposed"] == [reply["content"] for reply in replies], "the guard saw the record"
    assert json.loads(replies[2]["content"])["summary"] == PROSE
    assert json.loads(replies[1]["tool_calls"]) == [
        {"id": "call_d1", "name": "readspec", "arguments": DESIGN["function"]["arguments"]}
    ], "the native calls are recorded as sent"
    assert "PROTECTED DESIGN NOTES" not in json.dumps(state)

    text = FakeOpenAI(TEXT_R42)
    route_env(text, stream=stream)
    assert outcome(run_model(text)) == found, "decided exactly as the equivalent text documents"


def test_a_cassette_of_native_calls_replays_the_documents_the_guard_saw(route_env, tmp_path):
    server = FakeOpenAI(NATIVE_R42)
    route_env(server)
    recorded = run_model(server)
    cassette = tmp_path / "native.jsonl"
    write_cassette(cassette, recorded["model_calls"])
    replayed = run_embedded("R42", f"replay:{cassette}", thread="replayed")
    assert outcome(replayed) == outcome(recorded)


def test_content_that_is_a_document_wins_over_calls_beside_it(route_env):
    server = FakeOpenAI([{"content": GOOD_R42[0], "tool_calls": [DESIGN]}, STOP])
    route_env(server)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    assert reply["content"] == GOOD_R42[0] and json.loads(reply["tool_calls"])[0]["id"] == "call_d1"
    assert [item["call_id"] for item in state["evidence"]] == ["c1"] and state["refusals"] == []


REFUSED = {
    "arguments not JSON": (raw("call_x", "searchlogs", '{"path": '), "args", '{"path": '),
    "a key twice": (
        raw("call_x", "searchlogs", f'{{"path": "{R42_LOG}", "query": "a", "query": "b"}}'),
        "args",
        f'{{"path": "{R42_LOG}", "query": "a", "query": "b"}}',
    ),
    "arguments left out": (
        {"id": "call_x", "type": "function", "function": {"name": "searchlogs"}},
        "args",
        None,
    ),
    "no function name": (
        {"id": "call_x", "type": "function", "function": {"arguments": json.dumps({"q": 1})}},
        "name",
        {"q": 1},
    ),
}
"""Calls the guard refuses: what field it names, and the args the document carries."""


@pytest.mark.parametrize("stream", ["false", "true"])
@pytest.mark.parametrize("native_call, field, args", REFUSED.values(), ids=list(REFUSED))
def test_malformed_calls_go_in_as_they_came_and_the_guard_refuses_them(
    route_env, stream, native_call, field, args
):
    if stream == "true" and "arguments" not in native_call["function"]:
        args = ""  # a stream carries no absence: arguments that never came are empty text
    server = FakeOpenAI([{"tool_calls": [native_call]}, STOP])
    route_env(server, stream=stream)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    mapped = json.loads(reply["content"])["tool_calls"][0]
    assert reply["error"] is None and mapped["args"] == args, "the arguments as they came"
    assert events_of(state, "proposed")[0]["payload"]["raw"] == reply["content"]
    refusal = state["refusals"][0]
    assert (refusal["code"], refusal["owner"]) == ("malformed_action", "guard")
    assert f"tool_calls.0.{field}:" in refusal["detail"]
    assert state["evidence"] == [] and events_of(state, "executed") == []


@pytest.mark.parametrize("stream", ["false", "true"])
@pytest.mark.parametrize(
    "arguments",
    [f'["{R42_LOG}"]', json.dumps(json.dumps({"path": R42_LOG, "query": "x"}))],
    ids=["an array", "JSON inside a string"],
)
def test_arguments_that_are_json_but_not_an_object_are_a_failed_attempt(
    route_env, stream, arguments
):
    """The client library cannot build its message with them: said so in one line."""
    server = FakeOpenAI([{"tool_calls": [raw("call_x", "searchlogs", arguments)]}, STOP])
    route_env(server, stream=stream)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    assert reply["error"] == (
        "the reply's native tool calls cannot be read:"
        " tool_calls.0.args: Input should be a valid dictionary"
    )
    if stream == "false":  # a stream's events are the SDK's: only a body can be read again
        assert json.loads(reply["tool_calls"])[0]["arguments"] == arguments
    assert [event["payload"]["raw"] for event in events_of(state, "proposed")] == [STOP]
    assert state["evidence"] == [] and events_of(state, "executed") == []


FULL = native("call_s1", "searchlogs", path=R42_LOG, query="RST_CHK", limit=5)
CUT = {
    "a stream that ends mid call": ({"tool_calls": [FULL], "truncate": True}, "true", "truncated"),
    "the output limit mid call, streamed": (
        {"tool_calls": [FULL], "truncate": True, "finish_reason": "length"},
        "true",
        "output limit",
    ),
    "the output limit": (
        {"tool_calls": [FULL], "finish_reason": "length"},
        "false",
        "output limit",
    ),
    "another finish reason": (
        {"tool_calls": [FULL], "finish_reason": "eos"},
        "false",
        "finish reason 'eos' are not taken (only stop or tool_calls)",
    ),
}


@pytest.mark.parametrize("scripted, stream, expected", CUT.values(), ids=list(CUT.keys()))
def test_calls_cut_short_are_a_failed_attempt_never_a_call(route_env, scripted, stream, expected):
    server = FakeOpenAI([scripted, STOP])
    route_env(server, stream=stream)
    state = run_model(server)
    first = state["model_calls"][0]["reply"]
    assert expected in first["error"] and "\n" not in first["error"]
    assert not first["content"], "no document was made of the calls"
    (recorded,) = json.loads(first["tool_calls"])
    whole = FULL["function"]["arguments"]
    assert whole.startswith(recorded["arguments"])
    assert (recorded["arguments"] == whole) is (stream == "false"), "a stream's part, as it came"
    assert [event["payload"]["raw"] for event in events_of(state, "proposed")] == [STOP]
    assert events_of(state, "executed") == [] and state["evidence"] == []
    assert state["refusals"] == [] and state["status"] == "stopped"
