"""A run as a trace: OpenTelemetry spans from the sealed ledger (checked with the SDK's in-memory
exporter and over real OTLP/HTTP), no record content in any span, and `warrant trace` naming the
first hand-off where evidence was lost."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from graph.build import compile_graph
from graph.present.flows import Flow, evidence_flow, first_loss
from graph.present.tracing import finished_spans, span_specs
from graph.runs.interactions import resume_command
from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI
from tests.helpers import R42_CALLS, R42_REFS, call, recorded, stop
from tests.langsmith_collector import collector
from tests.nodes.choosers.test_model import GOOD_R42, local_only_log, run_model
from tests.nodes.choosers.test_model import route_env as route_env


def spans_of(state: dict, thread: str = "t1") -> list:
    return list(finished_spans(span_specs(thread, state, state["events"])))


def test_one_span_per_run_turn_node_entry_and_call_with_refs_and_hashes(route_env):
    server = FakeOpenAI(GOOD_R42)
    route_env(server)
    state = run_model(server)
    spans = spans_of(state)
    names = [span.name for span in spans]
    assert (
        names.count("warrant.run") == 1 and names.count("warrant.turn") == 5
    )  # admission is turn 0
    assert names.count("warrant.call") == 3 and names.count("warrant.model.model_replied") == 4
    ids = {span.context.span_id for span in spans}
    (root,) = [span for span in spans if span.parent is None]
    assert all(span.parent.span_id in ids for span in spans if span is not root)
    assert {span.context.trace_id for span in spans} == {root.context.trace_id}
    assert (
        root.attributes["warrant.status"] == "stopped" and root.attributes["warrant.thread"] == "t1"
    )
    calls = [span for span in spans if span.name == "warrant.call"]
    receipts = [(s.attributes["warrant.ref"], s.attributes["warrant.receipt"]) for s in calls]
    executed = [e["payload"] for e in state["events"] if e["type"] == "executed"]
    assert sorted(receipts) == [(p["ref"], p["receipt"]) for p in executed]
    assert all(span.end_time >= span.start_time for span in spans)
    # What reached the model: each request's section hashes, as its manifest recorded them.
    requested = sorted(
        (s for s in spans if s.name == "warrant.choose.requested"),
        key=lambda s: s.attributes["warrant.seq"],
    )
    manifests = [e["payload"]["manifest"] for e in state["events"] if e["type"] == "requested"]
    for span, manifest in zip(requested, manifests, strict=True):
        for section in manifest["sections"]:
            assert span.attributes[f"warrant.section.{section['name']}.sha256"] == section["sha256"]
    replied = [s for s in spans if s.name == "warrant.model.model_replied"]
    assert [s.attributes["warrant.usage.total_tokens"] for s in replied] == [120] * 4


def test_no_span_carries_record_content(route_env, scenario_dir):
    manifest = local_only_log(scenario_dir)
    server = FakeOpenAI(
        [
            json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")),
            json.dumps(stop("overflow seen")),
        ]
    )
    route_env(server, locality="remote")
    state = run_model(server, str(manifest))
    assert state["evidence"][0]["excerpt"]
    text = json.dumps([dict(span.attributes) for span in spans_of(state)])
    for item in state["evidence"]:
        assert item["summary"] not in text
        assert all(line["text"] not in text for line in item["excerpt"])
    assert "overflow" not in text  # neither the record's line nor the stop text quoting it
    assert "cc/t.log" in text  # ids are kept: the trace still says what was read


def test_warrant_trace_names_the_first_loss(route_env, scenario_dir):
    manifest = local_only_log(scenario_dir)
    server = FakeOpenAI(
        [json.dumps(call("c1", "searchlogs", path="cc/t.log", query="UVM")), json.dumps(stop())]
    )
    route_env(server, locality="remote")
    state = run_model(server, str(manifest))
    flows = evidence_flow(state, state["events"])
    assert [(flow.ref, flow.sent, flow.cited) for flow in flows] == [
        (
            "E1",
            "by reference (record cc/t.log is approved for local routes only (share = local))",
            False,
        )
    ]
    assert first_loss(flows).startswith(
        "E1 (turn 1) was stored but never sent to the model in full"
    )


def test_a_persons_answer_has_no_receipt_and_is_no_loss_for_it(action_file):
    """H1 is what a person said, not a record read: no receipt by nature, so `warrant trace`
    names no loss for it (it named "H1 has no stored receipt")."""
    graph, config = compile_graph(InMemorySaver()), {"configurable": {"thread_id": "h1"}}
    ask = {
        "summary": "ask",
        "message": {"kind": "ask_user", "question": "Which seed failed first?"},
    }
    cite = stop("ok", hypotheses=[{"statement": "seed 7 first", "refs": ["H1"]}])
    graph.invoke(
        {"scenario": "R42", "chooser": action_file([ask, cite])}, config, durability="sync"
    )
    answer = resume_command(
        graph.get_state(config), lambda kind: {"answer": "seed 7, in R38"}, None
    )
    graph.invoke(answer, config, durability="sync")
    state = recorded(graph, config)
    assert [(item["ref"], item["kind"], item["sha256"]) for item in state["evidence"]] == [
        ("H1", "human_answer", None)
    ]
    flows = evidence_flow(state, state["events"])
    assert [(flow.ref, flow.stored, flow.person, flow.cited) for flow in flows] == [
        ("H1", False, True, True)
    ]
    assert first_loss(flows) is None


def test_a_receipt_missing_from_an_observation_is_still_the_first_loss():
    """A person's answer is known by its `H` ref or its kind; an observation without a receipt
    is still lost, after any number of people's answers."""
    handover = {
        "evidence": [
            {"ref": "H1", "turn": 1, "sha256": None},
            {"ref": "A1", "kind": "human_answer", "turn": 2, "sha256": None},
            {"ref": "E1", "kind": "observation", "turn": 3, "sha256": None},
        ],
        "hypotheses": [{"statement": "s", "refs": ["H1", "A1", "E1"]}],
    }
    flows = evidence_flow(handover, [])
    assert [flow.person for flow in flows] == [True, True, False]
    assert first_loss(flows) == "E1 (turn 3) has no stored receipt"
    assert first_loss(flows[:2]) is None
    assert first_loss([Flow("H2", 1, False, "never", True, person=True)]).startswith(
        "H2 (turn 1) was stored but never sent"
    )


def test_warrant_trace_on_the_command_line(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    assert warrant("run", "R42", "--db", db, "--thread", "r42", "-q", cwd=tmp_path).returncode == 0
    shown = warrant("trace", "r42", "--db", db, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (
        "E3" in shown.stdout
        and "first loss: E1 (turn 1) reached the chooser but no hypothesis cites it" in shown.stdout
    )
    data = json.loads(warrant("trace", "r42", "--db", db, "--json", cwd=tmp_path).stdout)
    assert [flow["ref"] for flow in data["evidence"]] == R42_REFS
    missing = warrant("trace", "nope", "--db", db, cwd=tmp_path)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    unset = warrant("trace", "r42", "--db", db, "--export", cwd=tmp_path)
    assert unset.returncode == 2 and "OTEL_EXPORTER_OTLP_ENDPOINT" in unset.stderr


class Collector:
    """An OTLP/HTTP receiver: keeps each POST to /v1/traces, decoded."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                message = ExportTraceServiceRequest()
                message.ParseFromString(body)
                collector.requests.append(message)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list:
        return [
            span
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


def test_a_run_exports_its_spans_over_otlp_when_configured(tmp_path):
    collector = Collector()
    try:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url}
        result = warrant(
            "run", "R42", "--db", "memory", "--thread", "otlp", "-q", cwd=tmp_path, env=env
        )
        assert result.returncode == 0, result.stderr
        spans = collector.spans()
        assert [span.name for span in spans].count("warrant.call") == len(R42_CALLS)
        root = next(span for span in spans if span.name == "warrant.run")
        attributes = {a.key: a.value.string_value for a in root.attributes}
        assert attributes["warrant.thread"] == "otlp" and attributes["warrant.status"] == "stopped"
        db = str(tmp_path / "runs.sqlite")
        warrant("run", "R42", "--db", db, "--thread", "later", "-q", cwd=tmp_path)
        again = warrant("trace", "later", "--db", db, "--export", cwd=tmp_path, env=env)
        assert again.returncode == 0 and len(collector.requests) == 2  # that run had no endpoint
    finally:
        collector.server.shutdown()


def test_an_unreachable_collector_is_a_warning_and_the_run_stands(tmp_path):
    collector = Collector()
    collector.server.shutdown()
    collector.server.server_close()
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url}
    result = warrant("run", "R42", "--db", "memory", "--json", "-q", cwd=tmp_path, env=env)
    assert result.returncode == 0 and json.loads(result.stdout)["status"] == "stopped"
    assert (
        result.stderr.count("warning: trace not exported") == 1 and "Traceback" not in result.stderr
    )


def test_langsmith_gets_warrants_metadata_and_no_record_content(tmp_path):
    with collector() as (url, bodies):
        env = {
            "LANGSMITH_TRACING": "true",
            "LANGSMITH_ENDPOINT": url,
            "LANGSMITH_API_KEY": "k",
        }
        result = warrant(
            "run",
            "R42",
            "--db",
            "memory",
            "--thread",
            "traced",
            "--json",
            "-q",
            cwd=tmp_path,
            env=env,
            subprocess_=True,
        )
    assert result.returncode == 0, result.stderr
    handover = json.loads(result.stdout)
    sent = "\n".join(body.decode("utf-8", "replace") for body in bodies)
    assert '"warrant_thread":"traced"' in sent and '"warrant_scenario":"R42"' in sent
    assert '"scenario:R42"' in sent and '"langgraph_node":"guard"' in sent
    lines = [line["text"] for item in handover["evidence"] for line in item["excerpt"]]
    assert len(lines) > 10 and not [line for line in lines if len(line) > 8 and line in sent]
    assert not [item["summary"] for item in handover["evidence"] if item["summary"] in sent]
    assert "hidden_keys" in sent
