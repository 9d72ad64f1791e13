"""The model chooser end to end through the real ChatOpenAI transport, against a local server."""

from __future__ import annotations

import json

import pytest

from ledger.context import WarrantContext
from tests.fake_openai import MODEL, FakeOpenAI
from tests.helpers import R42_HISTORY, R42_LOG, R42_SPEC, call, run_embedded, stop, write_manifest

SECTIONS = [
    "protocol",
    "action schema",
    "grant",
    "tool catalog",
    "delegation",
    "goal",
    "evidence",
    "unknowns",
    "refusals",
    "reminders",
]
GOOD_R42 = [
    json.dumps(call("c1", "searchlogs", path=R42_LOG, query="RST_CHK", limit=5)),
    json.dumps(call("c2", "readspec", path=R42_SPEC, section="reset_release")),
    json.dumps(call("c3", "getrunhistory", path=R42_HISTORY, test="reset_smoke")),
    json.dumps(
        stop(
            "enough",
            hypotheses=[
                {
                    "statement": "clk_en rose 6 cycles after release; RST-5 allows 4",
                    "refs": ["E1", "E2"],
                }
            ],
        )
    ),
]
STOP = json.dumps(stop())


@pytest.fixture
def route_env(monkeypatch):
    """Point the model route at a fake server (the route is read from the environment); waits
    between attempts are tiny unless a test sets `backoff`."""

    def use(server: FakeOpenAI, **settings: str) -> None:
        monkeypatch.setenv("WARRANT_MODEL", MODEL)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("WARRANT_MODEL_BACKOFF", "0.01")
        for name, value in settings.items():
            monkeypatch.setenv(f"WARRANT_MODEL_{name.upper()}", value)

    return use


def run_model(
    server: FakeOpenAI, scenario: str = "R42", context: WarrantContext | None = None
) -> dict:
    with server.running():
        return run_embedded(scenario, "model", context=context)


def refusal_codes(state: dict) -> list[str]:
    return [refusal["code"] for refusal in state["refusals"]]


@pytest.mark.parametrize("stream", ["false", "true"])
def test_a_good_investigation_through_the_real_transport(route_env, stream):
    server = FakeOpenAI(GOOD_R42)
    route_env(server, stream=stream)
    state = run_model(server)
    assert [item["ref"] for item in state["evidence"]] == ["E1", "E2", "E3"]
    assert state["status"] == "stopped" and state["hypotheses"][0]["refs"] == ["E1", "E2"]
    assert len(server.requests) == 4 and all(
        request["stream"] is (stream == "true") for request in server.requests
    )
    assert [call["reply"]["usage"]["total_tokens"] for call in state["model_calls"]] == [120] * 4
    # The provider's request id header, or (streamed, where headers are not exposed) the completion id.
    assert state["model_calls"][0]["reply"]["request_id"] == (
        "chatcmpl-s" if stream == "true" else "req-1"
    )
    assert server.requests[0]["response_format"] == {"type": "json_object"}


def test_the_request_has_the_manifests_sections_in_order_and_is_recorded_first(route_env):
    server = FakeOpenAI(GOOD_R42)
    route_env(server)
    state = run_model(server)
    prompt = server.prompts[1]
    positions = [prompt.index(f"## {name}\n") for name in SECTIONS]
    assert positions == sorted(positions)
    requested = [event for event in state["events"] if event["type"] == "requested"]
    assert [
        section["name"] for section in requested[1]["payload"]["manifest"]["sections"]
    ] == SECTIONS
    assert requested[1]["seq"] < next(
        e["seq"] for e in state["events"] if e["type"] == "model_replied" and e["turn"] == 2
    )
    assert "<<<EVIDENCE E1 " in prompt and "<<<END EVIDENCE E1>>>" in prompt


def test_malformed_output_is_a_typed_refusal_and_a_new_attempt(route_env):
    server = FakeOpenAI(["this is not json", '{"summary": "half"', *GOOD_R42])
    route_env(server)
    state = run_model(server)
    assert refusal_codes(state)[:2] == ["malformed_action", "malformed_action"]
    assert len(state["model_calls"]) == 6 and state["status"] == "stopped"


def test_repeated_malformed_output_ends_with_model_failed(route_env):
    server = FakeOpenAI(["nope", "still nope", "{}"])
    route_env(server)
    state = run_model(server)
    assert state["status"] == "model_failed" and len(server.requests) == 3
    assert state["evidence"] == []


def test_a_truncated_stream_is_never_completed_or_executed(route_env):
    truncated = {"content": GOOD_R42[0], "truncate": True}
    server = FakeOpenAI([truncated, *GOOD_R42])
    route_env(server, stream="true")
    state = run_model(server)
    first = state["model_calls"][0]["reply"]
    assert "truncated" in first["error"], "recorded as an error, its partial text kept"
    assert (
        first["content"]
        and GOOD_R42[0].startswith(first["content"])
        and first["content"] != GOOD_R42[0]
    )
    assert [item["call_id"] for item in state["evidence"]] == ["c1", "c2", "c3"]
    assert state["turn"] == 4


def test_the_output_limit_reached_is_an_error_not_a_proposal(route_env):
    server = FakeOpenAI([{"content": GOOD_R42[0][:40], "finish_reason": "length"}, *GOOD_R42])
    route_env(server)
    state = run_model(server)
    first = state["model_calls"][0]["reply"]
    assert "output limit" in first["error"] and first["content"] == GOOD_R42[0][:40]
    assert state["status"] == "stopped" and len(state["evidence"]) == 3


def test_an_unknown_tool_and_an_invented_ref_are_refused(route_env):
    invented = json.dumps(stop("x", hypotheses=[{"statement": "x", "refs": ["E9"]}]))
    server = FakeOpenAI(
        [json.dumps(call("c1", "run_simulation", test="reset_smoke")), GOOD_R42[0], invented, STOP]
    )
    route_env(server)
    state = run_model(server)
    assert refusal_codes(state) == ["unknown_tool", "unknown_reference"]
    assert [item["ref"] for item in state["evidence"]] == ["E1"]


def test_a_server_error_and_a_timeout_are_recorded_attempts(route_env):
    server = FakeOpenAI([{"status": 500}, {"content": STOP, "delay": 3}, STOP])
    route_env(server, timeout="1")
    state = run_model(server)
    errors = [call["reply"]["error"] for call in state["model_calls"]]
    assert errors[0].startswith("HTTP 500") and errors[1].startswith("timeout")
    assert errors[2] is None and state["status"] == "stopped"
    assert [call["attempt"] for call in state["model_calls"]] == [1, 2, 3]


def test_an_endpoint_failing_every_attempt_ends_with_model_failed(route_env):
    server = FakeOpenAI([{"status": 503}] * 3)
    route_env(server)
    state = run_model(server)
    assert state["status"] == "model_failed" and len(server.requests) == 3
    assert any("model failed" in unknown for unknown in state["handover"]["unknowns"])


def test_missing_usage_stays_unknown(route_env):
    server = FakeOpenAI([{"content": STOP, "usage": False}])
    route_env(server)
    state = run_model(server)
    assert state["model_calls"][0]["reply"]["usage"] is None


def local_only_log(scenario_dir):
    """The throwaway scenario with its log approved for local routes only."""
    manifest = write_manifest(scenario_dir)
    manifest.write_text(
        manifest.read_text().replace('path = "logs/t.log"', 'path = "logs/t.log"\nshare = "local"')
    )
    return manifest


def test_a_local_only_record_is_never_sent_to_a_remote_route(route_env, scenario_dir):
    manifest = local_only_log(scenario_dir)
    server = FakeOpenAI([json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")), STOP])
    route_env(server, locality="remote")
    state = run_model(server, str(manifest))
    assert state["evidence"][0]["excerpt"], "the run itself still sees the evidence"
    assert all("overflow" not in prompt for prompt in server.prompts)
    requested = [event for event in state["events"] if event["type"] == "requested"]
    assert requested[1]["payload"]["manifest"]["omitted"][0]["ref"] == "E1"
    assert "share = local" in server.prompts[1]


def test_a_local_route_may_see_local_records(route_env, scenario_dir):
    manifest = local_only_log(scenario_dir)
    server = FakeOpenAI([json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")), STOP])
    route_env(server, locality="local")
    run_model(server, str(manifest))
    assert "overflow" in server.prompts[1]


def test_a_mandatory_part_too_big_is_a_capability_gap(route_env):
    server = FakeOpenAI(GOOD_R42)
    route_env(server, context_tokens="600", output_tokens="100")
    state = run_model(server)
    assert state["status"] == "capability_gap" and server.requests == []
    assert [event["type"] for event in state["events"]].count("stopped") == 1
    assert "Capability gap" in state["handover"]["chooser_stop_text"]


def test_large_old_evidence_is_replaced_by_references_and_the_run_continues(route_env):
    reads = [
        json.dumps(call(f"c{n}", "searchlogs", path=R42_LOG, query=q, limit=50))
        for n, q in enumerate(["UVM", "@", "0", "_"], 1)
    ]
    server = FakeOpenAI([*reads, STOP])
    route_env(server, context_tokens="5000", output_tokens="500")
    state = run_model(server)
    assert state["status"] == "stopped" and len(state["evidence"]) == 4
    manifests = [
        event["payload"]["manifest"] for event in state["events"] if event["type"] == "requested"
    ]
    assert any(manifest["omitted"] for manifest in manifests)
    last = manifests[-1]
    assert sum(section["tokens"] for section in last["sections"]) <= last["budget_tokens"]
    assert "Body not included (context budget)" in server.prompts[-1]
