"""The LangGraph server's own MCP and A2A endpoints are turned off (`langgraph.json`: `http`,
`disable_mcp`, `disable_a2a`): they exposed the graphs as tools outside Warrant's governed tool
surface (an anonymous `tools/list` on `langgraph dev` listed them, input schema and all). A real
`langgraph dev` with tokens configured: `/mcp` and `/a2a` are not served, with credentials or
without, while the runs API answers the credentialed caller and refuses the other."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.langgraph_server import langgraph_dev

pytestmark = pytest.mark.slow  # a real server

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("mcp-off")
    env = {"WARRANT_DB": str(folder / "w.sqlite"), "WARRANT_API_TOKENS": "alice:tok-alice"}
    with langgraph_dev(folder, env) as url:
        yield url


@pytest.mark.parametrize(
    ("credentials", "status"),
    [({}, 401), ({"Authorization": "Bearer tok-alice"}, 404)],
    ids=["anonymous: refused by the auth handler", "credentialed: no such route"],
)
def test_mcp_and_a2a_are_not_served_with_or_without_credentials(server, credentials, status):
    with httpx.Client(base_url=server, headers={**HEADERS, **credentials}, timeout=30) as http:
        for message in (INITIALIZE, LIST_TOOLS):
            for path in ("/mcp", "/mcp/"):
                answer = http.post(path, json=message)
                assert answer.status_code == status, answer.text[:300]
                assert "triage" not in answer.text
        assert http.get("/mcp").status_code == status
        assert http.post("/a2a/triage", json=LIST_TOOLS).status_code == status


def test_the_runs_api_is_served_to_its_credentialed_caller_only(server):
    """The control: the server is up and its protected routes run under Warrant's auth."""
    with httpx.Client(base_url=server, timeout=30) as http:
        assert http.post("/threads/search", json={}).status_code in (401, 403)
        allowed = http.post(
            "/threads/search", json={}, headers={"Authorization": "Bearer tok-alice"}
        )
        assert allowed.status_code == 200
