import json

import pytest

from guards.action import ActionDocument, parse_action
from guards.refusals import Refusal, RefusalCode
from tests.helpers import call, stop


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[1, 2]",
        '"a string"',
        "{}",
        json.dumps({"summary": "s"}),
        json.dumps({**call("c1", "searchlogs"), "message": {"kind": "stop"}}),
        json.dumps({"summary": "s", "tool_calls": []}),
        json.dumps(
            {"summary": "s", "tool_calls": [{"id": f"c{n}", "name": "x"} for n in range(5)]}
        ),
        json.dumps({**stop(), "run": "R43"}),
        json.dumps({"summary": "s", "message": {"kind": "delete_everything"}}),
        json.dumps({"summary": "s", "tool_calls": [{"id": "bad id!", "name": "x", "args": {}}]}),
        json.dumps({"summary": "s", "tool_calls": [{"id": "c1", "name": "x", "args": []}]}),
        json.dumps({"summary": "", "message": {"kind": "stop"}}),
        "[" * 100_000,
        "x" * 70_000,
        {"summary": "s", "tool_calls": "searchlogs"},
        None,
        42,
    ],
)
def test_anything_but_one_action_document_is_malformed(raw):
    refused = parse_action(raw)
    assert isinstance(refused, Refusal)
    assert refused.code is RefusalCode.MALFORMED_ACTION
    assert refused.owner == "guard"


def test_json_text_and_decoded_documents_parse_the_same():
    document = call("c1", "searchlogs", path="p", query="q")
    assert parse_action(json.dumps(document)) == parse_action(document)
    assert isinstance(parse_action(document), ActionDocument)


def test_stop_with_hypotheses_parses():
    document = stop(hypotheses=[{"statement": "clk_en rose late", "refs": ["E1", "E2"]}])
    parsed = parse_action(document)
    assert isinstance(parsed, ActionDocument)
    assert parsed.message.hypotheses[0].refs == ["E1", "E2"]


@pytest.mark.parametrize(
    "document",
    [
        {"summary": "x\ud800", "message": {"kind": "stop"}},
        {"summary": "s", "message": {"kind": "stop", "text": "é\udfff"}},
        {"summary": "s", "tool_calls": [{"id": "c1", "name": "x", "args": {"q\udc80": "v"}}]},
        {"summary": "s", "tool_calls": [{"id": "c1", "name": "x", "args": {"q": ["a", "\ud83d"]}}]},
    ],
)
def test_a_lone_surrogate_anywhere_is_malformed(document):
    refused = parse_action(document)
    assert isinstance(refused, Refusal) and "lone surrogate" in refused.detail


def test_non_ascii_text_is_not_taken_for_a_surrogate():
    parsed = parse_action({"summary": "Δslack — 🙂 ü", "message": {"kind": "stop", "text": "ok"}})
    assert isinstance(parsed, ActionDocument) and parsed.summary == "Δslack — 🙂 ü"
