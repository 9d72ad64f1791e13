"""What an endpoint answers with HTTP 200, recorded as it came, through the real transport."""

from __future__ import annotations

import hashlib
import json

import pytest

from guards.action import MAX_DOCUMENT_CHARS
from nodes.choosers.cassette import write_cassette
from tests.fake_openai import MODEL, FakeOpenAI
from tests.helpers import R42_LOG, call
from tests.nodes.choosers.test_model import STOP, run_model
from tests.nodes.choosers.test_model import route_env as route_env


def completion(**fields: object) -> dict:
    """A well-formed completion proposing STOP, with `fields` replaced (None: sent as null)."""
    body = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": STOP}, "finish_reason": "stop"}
        ],
    }
    return body | fields


def without(key: str) -> dict:
    body = completion()
    del body[key]
    return body


UNUSABLE = {
    "error object": (
        {"error": {"message": "model overloaded", "type": "server_error"}},
        "HTTP 200 with an error: model overloaded",
    ),
    "no choices": (completion(choices=[]), "no choices"),
    "null choices": (completion(choices=None), "no choices"),
    "missing choices": (without("choices"), "no choices"),
    "null message": (
        completion(choices=[{"index": 0, "message": None, "finish_reason": "stop"}]),
        "first choice has no message",
    ),
    "an array": ([], "a JSON array"),
    "a string": ("hello", "a JSON string"),
    "usage not counts": (
        completion(usage={"prompt_tokens": "many"}),
        "usage is not token counts: prompt_tokens='many'",
    ),
    "usage beyond 64 bits": (
        completion(usage={"prompt_tokens": 1 << 64, "completion_tokens": 1, "total_tokens": 1}),
        "usage is not token counts: prompt_tokens=18446744073709551616",
    ),
}


@pytest.mark.parametrize("body, expected", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_an_unusable_http_200_body_is_a_recorded_failed_attempt(route_env, body, expected):
    server = FakeOpenAI([{"body": body}, STOP])
    route_env(server)
    state = run_model(server)
    error = state["model_calls"][0]["reply"]["error"]
    assert expected in error and "\n" not in error
    assert state["status"] == "stopped" and len(server.requests) == 2
    assert state["refusals"] == [], "no proposal reached the guard"


def test_unusable_bodies_every_attempt_end_with_model_failed(route_env):
    server = FakeOpenAI([{"body": completion(choices=[])}] * 3)
    route_env(server)
    state = run_model(server)
    assert state["status"] == "model_failed" and len(state["model_calls"]) == 3
    assert "no choices" in state["handover"]["chooser_stop_text"]


def message(**fields: object) -> dict:
    return {"message": {"role": "assistant", "content": None, **fields}}


def test_native_tool_calls_are_recorded_as_sent_and_proposed_as_a_document(route_env):
    """`test_native_tool_calls.py` has the rest: malformed calls, calls cut short, replay."""
    arguments = json.dumps({"path": R42_LOG, "query": "RST_CHK"})
    native = {
        "id": "t1",
        "type": "function",
        "function": {"name": "searchlogs", "arguments": arguments},
    }
    server = FakeOpenAI([{**message(tool_calls=[native]), "finish_reason": "tool_calls"}, STOP])
    route_env(server)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    assert reply["error"] is None
    assert json.loads(reply["tool_calls"]) == [
        {"id": "t1", "name": "searchlogs", "arguments": arguments}
    ]
    assert json.loads(reply["content"]) == {
        "summary": "native tool calls: searchlogs",
        "tool_calls": [
            {"id": "t1", "name": "searchlogs", "args": {"path": R42_LOG, "query": "RST_CHK"}}
        ],
    }
    assert [(item["ref"], item["call_id"]) for item in state["evidence"]] == [("E1", "t1")]
    assert state["refusals"] == []


def test_a_refusal_is_recorded_and_said_as_such(route_env):
    server = FakeOpenAI([message(refusal="I can't help with that."), STOP])
    route_env(server)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    assert reply["refusal"] == "I can't help with that."
    assert reply["error"] == "the model refused: I can't help with that."
    assert not any("not JSON" in refusal["detail"] for refusal in state["refusals"])


@pytest.mark.parametrize("stream", ["false", "true"])
@pytest.mark.parametrize(
    "usage, recorded",
    [
        (None, None),
        ({"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}, None),
        (
            {"prompt_tokens": 7, "completion_tokens": None},
            {"input_tokens": 7, "output_tokens": None, "total_tokens": None},
        ),
    ],
)
def test_null_token_counts_stay_null_never_0(route_env, stream, usage, recorded):
    server = FakeOpenAI([{"content": STOP, "usage": usage}])
    route_env(server, stream=stream)
    state = run_model(server)
    assert state["model_calls"][0]["reply"]["usage"] == recorded


def test_an_oversized_reply_is_recorded_as_a_bounded_prefix_the_guard_refuses(route_env):
    huge = json.dumps(call("c1", "searchlogs", path=R42_LOG, query="RST_CHK")) + " " * 1_000_000
    server = FakeOpenAI([huge, STOP])
    route_env(server)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    assert len(reply["content"]) == MAX_DOCUMENT_CHARS + 1 and huge.startswith(reply["content"])
    assert reply["chars"] == len(huge)
    assert reply["sha256"] == hashlib.sha256(huge.encode()).hexdigest()
    proposed = [event for event in state["events"] if event["type"] == "proposed"]
    assert proposed[0]["payload"]["raw"] == reply["content"], "the guard saw what is recorded"
    assert state["refusals"][0]["code"] == "malformed_action"
    assert "longer than" in state["refusals"][0]["detail"] and state["evidence"] == []
    assert len(json.dumps(state)) < 5 * MAX_DOCUMENT_CHARS


def test_names_the_endpoint_sends_are_kept_clean(route_env, tmp_path):
    """A lone surrogate in the model name or request id would break a cassette and the server's
    JSON: names are recorded as clean single lines."""
    body = {
        "id": "req\ud800\nx",
        "object": "chat.completion",
        "created": 0,
        "model": "m\udfff",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": STOP}, "finish_reason": "stop"}
        ],
    }
    server = FakeOpenAI([{"body": body}])
    route_env(server)
    state = run_model(server)
    reply = state["model_calls"][0]["reply"]
    assert state["status"] == "stopped" and reply["model"] == "m\\udfff"
    write_cassette(tmp_path / "c.jsonl", state["model_calls"])
    assert (
        json.loads((tmp_path / "c.jsonl").read_text(encoding="utf-8"))["reply"]["model"]
        == "m\\udfff"
    )


def test_a_completion_without_the_fields_only_openai_sends_is_usable(route_env):
    """Local OpenAI-compatible servers may leave out `created` and `object`, which the `openai`
    SDK's `ChatCompletion` model requires: such a reply is a proposal, not a failed attempt."""
    body = completion()
    del body["created"], body["object"]
    server = FakeOpenAI([{"body": body}])
    route_env(server)
    state = run_model(server)
    assert state["status"] == "stopped" and len(server.requests) == 1
    assert state["model_calls"][0]["reply"]["error"] is None
