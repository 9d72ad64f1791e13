"""`warrant mcp serve`: an MCP client (the `mcp` SDK) drives a scenario's governed tools, over
stdio and streamable HTTP, through refused and approved calls; each session is a run whose
handover `warrant show` prints. What a result must say is computed here from the raw log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.cli_process import WARRANT, ledger, warrant
from tests.graph.test_mcp_tools import WRITE_MANIFEST, tickets
from tests.langgraph_server import free_port
from tests.tools.mcp.folders import lint_folder

MANIFEST = """id = "S1"
profile = "triage"
goal = "why did the FIFO overflow"
budget = { steps = 8, evidence = 4, refusals = 4 }

[[record]]
id = "log"
kind = "log"
path = "logs/t.log"
"""


@pytest.fixture
def scenario(scenario_dir: Path) -> Path:
    (scenario_dir / "s.toml").write_text(MANIFEST)
    return scenario_dir / "s.toml"


def error_lines(log: Path) -> list[str]:
    """The reference: the log's lines holding UVM_ERROR, read apart from Warrant."""
    return [line for line in log.read_text().splitlines() if "UVM_ERROR" in line]


@asynccontextmanager
async def stdio_session(*args: str, cwd: Path) -> AsyncIterator[ClientSession]:
    parameters = StdioServerParameters(
        command=WARRANT,
        args=["mcp", "serve", *args, "--quiet"],
        cwd=str(cwd),
        env={**os.environ, "WARRANT_DB": ""},
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text(result: Any) -> str:
    return str(result.content[0].text)


async def refused_then_approved(session: ClientSession, log: str) -> dict[str, Any]:
    """The client's calls; what each came back as."""
    listed = [tool.name for tool in (await session.list_tools()).tools]
    unknown = await session.call_tool("rm_rf", {"path": "/"})
    outside = await session.call_tool("searchlogs", {"path": "../secret.txt", "query": "never"})
    coerced = await session.call_tool(
        "searchlogs", {"path": log, "query": "UVM_ERROR", "context": "2"}
    )
    found = await session.call_tool("searchlogs", {"path": log, "query": "UVM_ERROR"})
    return {"listed": listed, "refused": [unknown, outside, coerced], "found": found}


def test_an_mcp_client_drives_a_session_run_through_refused_and_approved_calls(scenario):
    folder = scenario.parent
    db = str(folder / "w.sqlite")

    async def client() -> dict[str, Any]:
        async with stdio_session(str(scenario), "--db", db, cwd=folder) as session:
            return await refused_then_approved(session, "log")

    seen = anyio.run(client)
    assert {"searchlogs", "readspec"} <= set(seen["listed"]) and "rm_rf" not in seen["listed"]
    unknown, outside, coerced = seen["refused"]
    assert [r.isError for r in seen["refused"]] == [True, True, True]
    assert unknown.structuredContent["refusals"][0] | {"detail": ""} == {
        "code": "unknown_tool",
        "owner": "guard",
        "detail": "",
    }
    assert text(unknown).startswith("refused unknown_tool by guard: ")
    assert outside.structuredContent["refusals"][0]["code"] == "unapproved_record"
    assert coerced.structuredContent["refusals"][0]["code"] == "invalid_argument"
    found = seen["found"]
    assert not found.isError
    shown = [line["text"] for line in found.structuredContent["lines"]]
    assert [line for line in shown if "UVM_ERROR" in line] == error_lines(folder / "logs/t.log")
    thread = found.structuredContent["run"]
    assert {r.structuredContent["run"] for r in seen["refused"]} == {thread}

    shown_run = warrant("show", thread, "--db", db, "--json", cwd=folder)
    assert shown_run.returncode == 0, shown_run.stderr
    handover = json.loads(shown_run.stdout)
    assert handover["status"] == "stopped"  # the session's end stopped the run
    assert [item["ref"] for item in handover["evidence"]] == [found.structuredContent["ref"]]
    assert [r["code"] for r in handover["refusals"]] == [
        "unknown_tool",
        "unapproved_record",
        "invalid_argument",
    ]
    assert warrant("events", thread, "--db", db, "--verify", cwd=folder).returncode == 0
    proposed = [event for event in ledger(thread, db) if event["type"] == "proposed"]
    assert {event["actor"] for event in proposed} == {"chooser:mcp-client"}
    assert proposed[-1]["payload"]["raw"]["message"]["text"] == "The MCP client's session ended."


def test_a_call_that_needs_a_person_parks_the_session_run_until_one_approves(tmp_path):
    """Warrant's own MCP tools, served again: a write waits for a person."""
    lint_folder(tmp_path, WRITE_MANIFEST)
    assert warrant("mcp", "pin", "m.toml", cwd=tmp_path).returncode == 0
    db = str(tmp_path / "w.sqlite")

    async def client() -> tuple[Any, Any]:
        async with stdio_session("m.toml", "--db", db, cwd=tmp_path) as session:
            parked = await session.call_tool("lint.file_ticket", {"title": "from a client"})
            later = await session.call_tool("lint.check_file", {"path": "a.sv"})
            return parked, later

    parked, later = anyio.run(client)
    assert parked.isError and parked.structuredContent["status"] == "awaiting_human"
    thread = parked.structuredContent["run"]
    assert f"warrant resume {thread} --approve" in text(parked)
    assert later.isError and "takes no more calls" in text(later)
    assert tickets(tmp_path) == []
    approved = warrant("resume", thread, "--approve", "--db", db, "--json", cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert tickets(tmp_path) == ["from a client"]
    handover = json.loads(approved.stdout)
    assert handover["status"] == "stopped" and handover["evidence"][0]["error"] is None


@pytest.fixture
def http_serve(scenario: Path) -> Iterator[tuple[str, str, str, subprocess.Popen[str]]]:
    port, token = free_port(), "t0k3n-for-the-test"
    db = str(scenario.parent / "h.sqlite")
    process = subprocess.Popen(
        [WARRANT, "mcp", "serve", str(scenario), "--http", str(port), "--db", db, "--quiet"],
        cwd=scenario.parent,
        env={**os.environ, "WARRANT_DB": "", "WARRANT_MCP_TOKEN": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.2)
    try:
        yield url, token, db, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


@pytest.mark.slow  # a server process, stopped by a signal
def test_over_http_a_client_without_the_token_is_refused_and_one_with_it_gets_a_run(
    http_serve, scenario
):
    url, token, db, process = http_serve
    anonymous = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert anonymous.status_code == 401
    wrong = httpx.post(url, headers={"Authorization": "Bearer nope"}, json={})
    assert wrong.status_code == 401

    async def client() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await refused_then_approved(session, "log")

    seen = anyio.run(client)
    found = seen["found"]
    assert not found.isError and [r.isError for r in seen["refused"]] == [True, True, True]
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0, process.stderr.read() if process.stderr else ""
    handover = json.loads(
        warrant(
            "show", found.structuredContent["run"], "--db", db, "--json", cwd=scenario.parent
        ).stdout
    )
    assert handover["status"] == "stopped" and len(handover["evidence"]) == 1


def test_a_scenario_that_cannot_be_admitted_is_refused_in_one_line(tmp_path):
    result = warrant("mcp", "serve", str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "missing.toml" in line


def test_the_help_names_the_transports_and_what_a_session_is(tmp_path):
    shown = warrant("mcp", "serve", "--help", cwd=tmp_path)
    assert shown.returncode == 0
    words = " ".join(shown.stdout.split())
    assert "--http" in words and "each session is a run of SCENARIO" in words


def test_a_session_run_taken_up_without_its_session_stops(scenario):
    """What `warrant resume` finds when the server of a session was killed: no client to call."""
    result = warrant(
        "run",
        str(scenario),
        "--chooser",
        "mcp-client",
        "--db",
        "memory",
        "--json",
        cwd=scenario.parent,
    )
    handover = json.loads(result.stdout)
    assert handover["status"] == "stopped" and handover["evidence"] == []
    assert "The MCP client's session ended." in json.dumps(handover)
