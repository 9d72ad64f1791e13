"""How a route asks its server for JSON (`Route.dialect`) and names the output limit
(`Route.token_param`): what reaches the server, through the real ChatOpenAI, and the response schema
derived from the catalog and the grant."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from ledger.bodies import body_digest
from nodes.choosers.response_schema import MAX_STRING, response_schema, server_safe
from nodes.choosers.route import RouteError, route_from_env
from scenario.profiles import SHOWN_WITH_PDF_SPEC
from tests.fake_openai import FakeOpenAI
from tests.helpers import PLAIN_TRIAGE_TOOLS, R42_HISTORY, R42_LOG, R42_SPEC, call, stop
from tests.nodes.choosers.test_model import GOOD_R42, run_model
from tests.nodes.choosers.test_model import route_env as route_env
from tools.catalog import tools_of

LEFT = {"steps": 4.0, "evidence": 2.0, "seconds": 60.0}
R42_RECORDS = [
    {"id": R42_LOG, "kind": "log"},
    {"id": R42_SPEC, "kind": "spec"},
    {"id": R42_HISTORY, "kind": "history"},
]


def test_by_default_json_mode_and_max_completion_tokens(route_env):
    server = FakeOpenAI(GOOD_R42)
    route_env(server)
    state = run_model(server)
    assert state["status"] == "stopped"
    first = server.requests[0]
    assert first["response_format"] == {"type": "json_object"}
    assert first["max_completion_tokens"] == 1024 and "max_tokens" not in first
    requested = [event for event in state["events"] if event["type"] == "requested"]
    assert requested and all("response_schema" not in e["payload"]["manifest"] for e in requested)
    assert all(c["response_schema"] is None for c in state["model_calls"])


def test_llama_dialect_sends_the_schema_and_max_tokens(route_env):
    server = FakeOpenAI(GOOD_R42)
    route_env(server, dialect="json_object+schema", token_param="max_tokens", output_tokens="300")
    state = run_model(server)
    assert state["status"] == "stopped"
    schemas = []
    for request in server.requests:
        assert request["max_tokens"] == 300 and "max_completion_tokens" not in request
        assert request["response_format"]["type"] == "json_object"
        schemas.append(request["response_format"]["schema"])
    # What reached the server is what was recorded: the manifest names its digest, and each
    # model call points at the stored schema.
    requested = [event for event in state["events"] if event["type"] == "requested"]
    assert [event["payload"]["manifest"]["response_schema"] for event in requested] == [
        body_digest(schema) for schema in schemas
    ]
    assert [c["response_schema"] for c in state["model_calls"]] == [body_digest(s) for s in schemas]
    # Every document the model sent fits the schema it was sent with, with the turn's fresh ids.
    for turn, (schema, reply) in enumerate(zip(schemas, GOOD_R42, strict=True), start=1):
        document = json.loads(reply)
        for index, proposed in enumerate(document.get("tool_calls", ()), start=1):
            proposed["id"] = f"t{turn}c{index}"
        jsonschema.validate(document, schema)
    # The last turn may cite the evidence that exists by then, and nothing else.
    cited = schemas[-1]["anyOf"][1]["properties"]["message"]["anyOf"][0]
    refs = cited["properties"]["hypotheses"]["items"]["properties"]["refs"]["items"]["enum"]
    assert refs == ["E1", "E2", "E3"]
    assert max(int(n) for n in re.findall(r'"maxLength": (\d+)', json.dumps(schemas))) == MAX_STRING


def test_structured_outputs_dialect(route_env):
    server = FakeOpenAI(GOOD_R42)
    route_env(server, dialect="json_schema")
    state = run_model(server)
    assert state["status"] == "stopped"
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "action_document"
    jsonschema.validate(
        call("t1c1", "searchlogs", path=R42_LOG, query="RST_CHK"), sent["json_schema"]["schema"]
    )


def test_schema_names_only_the_profiles_tools_and_the_granted_records():
    shown = [spec for spec in tools_of("triage").values() if spec.name not in SHOWN_WITH_PDF_SPEC]
    schema = response_schema(shown, R42_RECORDS, [], None, 2, LEFT)  # as R42's catalog shows them
    calls = schema["anyOf"][0]["properties"]["tool_calls"]["prefixItems"][0]["anyOf"]
    assert [c["properties"]["name"]["const"] for c in calls] == PLAIN_TRIAGE_TOOLS
    paths = {
        c["properties"]["name"]["const"]: c["properties"]["args"]["properties"]["path"]["enum"]
        for c in calls
        if "path" in c["properties"]["args"]["properties"]
    }
    tables = calls[-1]["properties"]["args"]["properties"]["tables"]
    assert tables["additionalProperties"]["enum"] == ["lab/history/regressions.csv"]
    assert "$defs" not in json.dumps(calls[-1])
    assert paths["searchlogs"] == [R42_LOG] and paths["readspec"] == [R42_SPEC]
    for document in (
        call("t2c1", "readspec", path="lab/protected/design.txt", section="reset"),
        call("t2c1", "stasummary", report=R42_LOG),
        call("t2c2", "readlines", path=R42_LOG, start=3),  # the first call has the first id
        call("t2c1", "searchlogs", path=R42_SPEC, query="RST"),  # a spec is not a log
        call("c1", "readlines", path=R42_LOG, start=3),  # not one of the turn's fresh ids
        call("t2c1", "searchlogs", path=R42_LOG, query="x" * 201),  # longer than Warrant allows
        {
            "summary": "two",
            "tool_calls": [call("t2c1", "logsummary", path=R42_LOG)["tool_calls"][0]] * 2,
        },  # one id twice
        {"summary": "", "message": {"kind": "stop"}},  # an empty summary
        stop(hypotheses=[{"statement": "s", "refs": ["E1"]}]),  # no evidence yet
        {"summary": "both", "tool_calls": [], "message": {"kind": "stop"}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(document, schema)
    jsonschema.validate(call("t2c1", "readlines", path=R42_LOG, start=3), schema)
    two = (
        call("t2c1", "logsummary", path=R42_LOG)["tool_calls"]
        + call("t2c2", "readspec", path=R42_SPEC, section="reset")["tool_calls"]
    )
    jsonschema.validate({"summary": "two", "tool_calls": two}, schema)
    jsonschema.validate({"summary": "?", "message": {"kind": "ask_user", "question": "q"}}, schema)


def delegation(*, evidence: int) -> dict:
    """A message delegating one R42 task of one step and `evidence` items."""
    task = {
        "id": "t2k1",
        "goal": "g",
        "records": [R42_LOG],
        "budget": {"steps": 1, "evidence": evidence},
    }
    return {"summary": "d", "message": {"kind": "delegate", "tasks": [task]}}


def test_a_tool_with_no_granted_record_of_its_kind_is_left_out_and_delegation_only_where_allowed():
    schema = response_schema(tools_of("triage").values(), R42_RECORDS[:1], [], None, 2, LEFT)
    calls = schema["anyOf"][0]["properties"]["tool_calls"]["prefixItems"][0]["anyOf"]
    assert {c["properties"]["name"]["const"] for c in calls} == {
        "searchlogs",
        "readlines",
        "logsummary",
    }
    messages = schema["anyOf"][1]["properties"]["message"]["anyOf"]
    assert [m["properties"]["kind"]["const"] for m in messages] == ["stop", "ask_user"]
    delegating = response_schema([], R42_RECORDS, [], {"max_tasks": 2}, 2, LEFT)
    assert len(delegating["anyOf"]) == 1  # no tools: a message only
    tasks = delegating["anyOf"][0]["properties"]["message"]["anyOf"][2]["properties"]["tasks"]
    budget = tasks["prefixItems"][0]["properties"]["budget"]
    # Close integer bounds are offered as values: llama.cpp ignores minimum and maximum.
    assert (
        budget["properties"]["steps"]["enum"] == [1, 2, 3] and "questions" not in budget["required"]
    )
    assert budget["properties"]["evidence"]["enum"] == [1, 2]
    assert budget["properties"]["questions"]["enum"] == list(range(101))
    jsonschema.validate(delegation(evidence=1), delegating)
    with pytest.raises(jsonschema.ValidationError):  # evidence 0: Warrant's TaskBudget refuses it
        jsonschema.validate(delegation(evidence=0), delegating)
    kinds = [
        m["properties"]["kind"]["const"]
        for m in delegating["anyOf"][0]["properties"]["message"]["anyOf"]
    ]
    assert kinds == ["stop", "ask_user", "delegate"]


def test_server_safe_keeps_an_argument_named_title_and_bounds_every_string():
    schema = {
        "properties": {
            "title": {"type": "string", "maxLength": 5},
            "body": {"type": "string", "maxLength": 2000},
        },
        "title": "T",
        "items": {
            "anyOf": [{"type": "string", "pattern": "^a$"}, {"enum": ["x"], "type": "string"}]
        },
    }
    assert server_safe(schema) == {
        "properties": {
            "title": {"type": "string", "maxLength": 5},
            "body": {"type": "string", "maxLength": MAX_STRING},
        },
        "items": {
            "anyOf": [
                {"type": "string", "maxLength": MAX_STRING},
                {"enum": ["x"], "type": "string"},
            ]
        },
    }


@pytest.mark.parametrize(("name", "value"), [("DIALECT", "xml"), ("TOKEN_PARAM", "max_output")])
def test_an_unknown_dialect_or_token_parameter_is_a_route_error(name, value):
    with pytest.raises(RouteError, match=name.lower()):
        route_from_env({"WARRANT_MODEL": "m", f"WARRANT_MODEL_{name}": value})
