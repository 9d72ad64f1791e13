"""The MCP client against a real server (FastMCP, started by the tests over stdio and streamable
HTTP): tools listed with their pins, a call's text and digest, and a server that hangs, floods,
dies mid-call or cannot start, each one line, within its limit."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scenario.mcp import McpServer
from tests.langgraph_server import free_port
from tools.mcp.client import McpUnavailable, call, discover

HERE = Path(__file__).resolve().parent
STDIO = McpServer(name="lint", command=[sys.executable, "lint_server.py"])


def pin(description: str, schema: dict) -> str:
    """The digest computed here, apart from the code under test."""
    text = json.dumps(
        {"description": description, "input_schema": schema}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def http_server() -> Iterator[McpServer]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(HERE / "lint_server.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                discover(McpServer(name="lint", url=f"{url}/mcp"), HERE, 5)
                break
            except McpUnavailable:
                time.sleep(0.3)
        yield McpServer(name="lint", url=f"{url}/mcp")
    finally:
        process.kill()  # a hung call keeps a graceful stop waiting
        process.wait(timeout=20)


@pytest.fixture(params=["stdio", "http"])
def server(request) -> McpServer:
    return STDIO if request.param == "stdio" else request.getfixturevalue("http_server")


def test_the_servers_tools_are_listed_with_their_pins(server):
    found = {tool.name: tool for tool in discover(server, HERE, 30)}
    assert set(found) == {"check_file", "hang", "flood", "die", "delete_all", "file_ticket"}
    check = found["check_file"]
    assert check.description == "Lint one file and list its findings."
    assert check.input_schema["properties"]["path"]["type"] == "string"
    assert check.digest == pin(check.description, check.input_schema)


def test_a_call_returns_its_text_and_the_digest_of_all_it_sent(server):
    called = call(server, HERE, "check_file", {"path": "rtl/top.sv", "strict": True}, 30, 1 << 20)
    expected = (
        "rtl/top.sv:3: unused signal 'clk_en_q'\nrtl/top.sv:9: blocking assignment in always_ff"
        "\nstrict: 2 findings"
    )
    assert called.text == expected and not called.is_error and not called.truncated
    assert called.sha256 == hashlib.sha256(expected.encode()).hexdigest()


def test_a_flood_is_cut_at_the_cap_and_its_digest_covers_all_it_sent(server):
    called = call(server, HERE, "flood", {}, 60, 64 * 1024)
    assert called.truncated and called.size == 10 * 1024 * 1024
    assert called.text == "x" * (64 * 1024)
    assert called.sha256 == hashlib.sha256(b"x" * (10 * 1024 * 1024)).hexdigest()


def test_a_hanging_tool_fails_that_call_at_its_limit(server):
    started = time.monotonic()
    with pytest.raises(McpUnavailable) as failed:
        call(server, HERE, "hang", {}, 2, 1 << 20)
    assert str(failed.value) == "mcp server 'lint' did not call hang within 2s"
    assert time.monotonic() - started < 15  # the limit, and the server's stop


def test_a_server_that_dies_mid_call_is_one_line():
    with pytest.raises(McpUnavailable) as failed:
        call(STDIO, HERE, "die", {}, 20, 1 << 20)
    assert str(failed.value).startswith("mcp server 'lint' ")
    assert "\n" not in str(failed.value)


def test_a_server_that_cannot_start_is_one_line(tmp_path):
    missing = McpServer(name="gone", command=[str(tmp_path / "no-such-server")])
    with pytest.raises(McpUnavailable) as failed:
        discover(missing, tmp_path, 10)
    assert str(failed.value).startswith("mcp server 'gone' could not list its tools: ")
