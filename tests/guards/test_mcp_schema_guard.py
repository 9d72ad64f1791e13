"""The guard checks an MCP call's arguments against its pinned input schema without the network
and in linear time: a `$ref` the schema does not hold is a refusal (a local HTTP server counts
that nothing was fetched), an unreachable one too, never an exception; a nested-quantifier
`pattern` runs on RE2 against an input Python's backtracking engine would take minutes over."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from guards.checks import parse_proposal
from guards.refusals import Refusal, RefusalCode
from tests.helpers import call
from tools.mcp.arguments import McpArgs

TOOL = "lint.check_file"
EVIL = "^(a+)+$"
LONG = "a" * 5000 + "!"  # backtracking over `^(a+)+$` takes 2**5000 steps


class Counting(ThreadingHTTPServer):
    hits = 0


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        assert isinstance(self.server, Counting)
        self.server.hits += 1
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served() -> Iterator[Counting]:
    """A schema server on 127.0.0.1 that counts the requests it answers."""
    server = Counting(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def checked(schema: dict, **args: object) -> McpArgs | Refusal:
    """What the guard makes of one call to `lint.check_file` under `schema`."""
    parsed = parse_proposal(call("c1", TOOL, **args), "triage", {TOOL: schema})
    return parsed.validated[0]


def path_schema(path: dict) -> dict:
    return {"type": "object", "properties": {"path": path}, "required": ["path"]}


def refused(outcome: McpArgs | Refusal) -> str:
    assert isinstance(outcome, Refusal), outcome
    assert outcome.code is RefusalCode.INVALID_ARGUMENT
    return outcome.detail


def test_a_remote_ref_is_refused_and_never_fetched(served):
    ref = f"http://127.0.0.1:{served.server_port}/path.json"
    detail = refused(checked(path_schema({"$ref": ref}), path="rtl/top.sv"))
    assert detail == f"its pinned schema's $ref {ref!r} is not within it (nothing is fetched)"
    assert served.hits == 0


def outside_uris(port: int) -> list[dict]:
    """Schemas whose refs resolve to a URI on `port`: through `$id`, `$dynamicRef`, and a ref
    reached while looking for unevaluated properties."""
    base = f"http://127.0.0.1:{port}"
    return [
        {"$id": f"{base}/", "properties": {"path": {"$ref": "path.json"}}},
        {"$id": f"{base}/root.json", "$ref": "path.json"},
        path_schema({"$dynamicRef": f"{base}/path.json"}),
        {"allOf": [{"$ref": f"{base}/path.json"}], "unevaluatedProperties": False},
    ]


@pytest.mark.parametrize("which", range(4))
def test_a_ref_resolved_against_an_outside_uri_is_never_fetched(served, which):
    schema = outside_uris(served.server_port)[which]
    assert "(nothing is fetched)" in refused(checked(schema, path="rtl/top.sv"))
    assert served.hits == 0


def test_an_unreachable_ref_is_a_refusal_not_an_exception():
    ref = f"http://127.0.0.1:{closed_port()}/path.json"
    for _ in range(2):  # as on every resume: the same refusal, each time
        detail = refused(checked(path_schema({"$ref": ref}), path="rtl/top.sv"))
        assert detail == f"its pinned schema's $ref {ref!r} is not within it (nothing is fetched)"


def test_a_local_ref_resolves_and_a_dangling_one_is_refused():
    schema = {
        "type": "object",
        "$defs": {"path": {"type": "string", "maxLength": 8}},
        "properties": {"path": {"$ref": "#/$defs/path"}},
    }
    assert checked(schema, path="top.sv") == McpArgs(values={"path": "top.sv"})
    assert refused(checked(schema, path="rtl/top_tb.sv")).startswith("path: ")
    dangling = path_schema({"$ref": "#/$defs/missing"})
    assert refused(checked(dangling, path="x")) == (
        "its pinned schema's $ref '#/$defs/missing' is not within it (nothing is fetched)"
    )


@pytest.mark.parametrize(
    ("schema", "args", "accepted"),
    [
        (path_schema({"type": "string", "pattern": EVIL}), {"path": LONG}, False),
        (path_schema({"type": "string", "pattern": EVIL}), {"path": "aaaa"}, True),
        (path_schema({"propertyNames": {"pattern": EVIL}}), {"path": {LONG: 1}}, False),
        (path_schema({"patternProperties": {EVIL: False}}), {"path": {LONG: 1}}, True),
        (path_schema({"patternProperties": {EVIL: False}}), {"path": {"aaaa": 1}}, False),
        (
            path_schema({"patternProperties": {EVIL: True}, "additionalProperties": False}),
            {"path": {LONG: 1}},
            False,
        ),
    ],
)
def test_a_nested_quantifier_runs_in_linear_time(schema, args, accepted):
    started = time.monotonic()
    outcome = checked(schema, **args)
    assert time.monotonic() - started < 5  # Python's `re` would take longer than the universe
    assert isinstance(outcome, McpArgs) == accepted, outcome


def test_a_pattern_re2_cannot_run_is_a_refusal():
    schema = path_schema({"type": "string", "pattern": "^(a)\\1$"})
    assert refused(checked(schema, path="aa")) == (
        "its pinned schema's pattern '^(a)\\\\1$' is not RE2 syntax (invalid escape sequence: \\1)"
    )


def test_unevaluated_properties_beside_pattern_properties_is_a_refusal():
    schema = {
        "type": "object",
        "patternProperties": {EVIL: True},
        "unevaluatedProperties": False,
    }
    assert refused(checked(schema, **{LONG: 1})) == (
        "its pinned schema pairs unevaluatedProperties with patternProperties, which is not checked"
    )
