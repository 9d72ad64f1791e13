"""Provenance travels with values: where a value may go is read from the value, at every sink.

Each test plants a canary in a record or a result marked local and follows it to a sink outside
the machine: an MCP server not marked local (its arguments), a note saved for other runs, a remote
MCP client of `warrant mcp serve`, the reference a remote route is shown in place of a withheld
body. What the canary is comes from the raw files here, never from the code under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from graph.runs.interactions import pending_of, resume_command
from ledger.context import WarrantContext
from nodes import memory
from nodes.choosers import ScriptedChooser
from nodes.choosers.route import Route
from nodes.choosers.withholding import EvidenceBlock, note_for_route
from tests.cli_process import warrant
from tests.graph.test_mcp_serve import stdio_session
from tests.helpers import recorded
from tests.tools.mcp.folders import lint_folder, lint_manifest

CANARY = "Qz9provenanceCanary"


def _manifest(*, share: str = "local", locality: str = "", memory_on: bool = False) -> str:
    where = f'locality = "{locality}"\n' if locality else ""
    project = 'memory = { project = "team" }\n' if memory_on else ""
    top = f"""id = "P1"
profile = "triage"
goal = "why does top.sv fail lint"
{project}budget = {{ steps = 8, evidence = 6, call_s = 20 }}
"""
    tool = """[[mcp.tool]]
name = "check_file"
"""
    return lint_manifest(top, tool, record=f'share = "{share}"\n', server=where)


def _folder(tmp_path: Path, manifest: str) -> Path:
    path = lint_folder(tmp_path, manifest)
    (tmp_path / "build.log").write_text(f"UVM_ERROR @ 10: lint failed on {CANARY}\n")
    assert warrant("mcp", "pin", "m.toml", cwd=tmp_path).returncode == 0
    return path


def call(call_id: str, name: str, **args: object) -> dict[str, Any]:
    return {"summary": name, "tool_calls": [{"id": call_id, "name": name, "args": args}]}


STOP = {"summary": "stop", "message": {"kind": "stop", "text": "done"}}
CONFIG = {"configurable": {"thread_id": "p1"}}


def _run(manifest: Path, script: list[dict[str, Any]], store: InMemoryStore | None = None):
    graph = compile_graph(InMemorySaver(), store or InMemoryStore())
    context = WarrantContext(choosers={"s": ScriptedChooser(script)})
    graph.invoke({"scenario": str(manifest), "chooser": "s"}, CONFIG, context=context)
    return graph, context


def _approve(graph: Any, context: WarrantContext) -> None:
    approve = {"decision": "approve", "by": "bob"}
    command = resume_command(graph.get_state(CONFIG), lambda kind: approve, None)
    graph.invoke(command, CONFIG, context=context, durability="sync")


def test_a_remote_mcp_server_gets_no_arguments_written_after_local_content_was_shown(tmp_path):
    manifest = _folder(tmp_path, _manifest(locality="remote"))
    read_log = call("c2", "searchlogs", path="build_log", query="UVM_ERROR")
    graph, _ = _run(
        manifest,
        [
            call("c1", "lint.check_file", path="rtl/top.sv"),  # nothing local shown yet
            call("c1b", "lint.check_file", path="rtl/other.sv"),  # its own result goes back
            read_log,
            call("c3", "lint.check_file", path=CANARY),  # the log's canary, to a remote party
            STOP,
        ],
    )
    state = recorded(graph, CONFIG)
    tools = [item["tool"] for item in state["evidence"]]
    assert tools == ["lint.check_file", "lint.check_file", "searchlogs"]
    [refusal] = state["refusals"]
    assert (refusal["code"], refusal["owner"]) == ("local_data", "guard")
    assert "build_log" in refusal["detail"] and "lint" in refusal["detail"]
    assert state["evidence"][2]["provenance"]["local"] == ["build_log"]
    assert state["evidence"][0]["provenance"] == {
        "share": "local",  # an MCP result is local unless its manifest shares it
        "sources": ["mcp:lint.check_file"],
        "local": ["mcp:lint.check_file"],
    }


def test_a_server_marked_local_or_shareable_content_lets_the_call_go(tmp_path):
    for folder, text in (
        ("local-server", _manifest(locality="local")),
        ("shared-log", _manifest(share="any", locality="remote")),
    ):
        (tmp_path / folder).mkdir()
        manifest = _folder(tmp_path / folder, text)
        graph, _ = _run(
            manifest,
            [
                call("c1", "searchlogs", path="build_log", query="UVM_ERROR"),
                call("c2", "lint.check_file", path="rtl/top.sv"),
                STOP,
            ],
        )
        state = recorded(graph, CONFIG)
        assert state["refusals"] == [], folder
        assert [item["tool"] for item in state["evidence"]] == ["searchlogs", "lint.check_file"]


def test_a_note_quoting_a_local_mcp_result_is_saved_local_whoever_approves_it(tmp_path):
    # Every record of the grant is shareable: only the MCP result (local by default) is local.
    manifest = _folder(tmp_path, _manifest(share="any", memory_on=True))
    store = InMemoryStore()
    remember = {
        "summary": "keep it",
        "message": {"kind": "remember", "text": "top.sv: unused clk_en_q", "refs": ["E1"]},
    }
    graph, context = _run(
        manifest, [call("c1", "lint.check_file", path="rtl/top.sv"), remember, STOP], store
    )
    [(_, waiting)] = pending_of(graph.get_state(CONFIG))
    assert waiting["kind"] == "remember"
    _approve(graph, context)
    [note] = memory.notes(store, memory.Scope("team"))
    assert note["share"] == "local"


def test_a_note_read_from_nothing_local_stays_shareable(tmp_path):
    manifest = _folder(tmp_path, _manifest(share="any", memory_on=True))
    store = InMemoryStore()
    remember = {
        "summary": "keep it",
        "message": {
            "kind": "remember",
            "text": "the build log names a lint failure",
            "refs": ["E1"],
        },
    }
    graph, context = _run(
        manifest,
        [call("c1", "searchlogs", path="build_log", query="UVM_ERROR"), remember, STOP],
        store,
    )
    _approve(graph, context)
    [note] = memory.notes(store, memory.Scope("team"))
    assert note["share"] == "any"


def test_a_withheld_body_or_note_shows_no_function_of_its_content():
    remote = Route(model="m", base_url="http://127.0.0.1:9/v1", locality="remote")
    item = {
        "ref": "E1",
        "tool": "analyze",
        "record": "hist",
        "sha256": "0" * 64,
        "summary": f"analysis, not a source fact: pin {CANARY}",
        "excerpt": [{"line": 1, "text": f"pin={CANARY}", "flags": []}],
        "flags": [],
        "provenance": {"share": "local", "sources": ["hist"], "local": ["hist"]},
    }
    block = EvidenceBlock.of(item, {}, remote)
    body_digest = block.omission["sha256"] if block.omission else ""
    assert CANARY not in block.text and body_digest and body_digest[:8] not in block.text
    assert "sha256" not in block.text
    note = {"ref": "M1", "version": 1, "query": "pin", "text": CANARY, "share": "local"}
    note["sha256"] = "f" * 64
    shown = note_for_route(note, remote)
    assert "sha256" not in shown and "text" not in shown and CANARY not in str(shown)


def test_a_remote_mcp_client_is_answered_nothing_read_from_a_local_record(scenario_dir: Path):
    (scenario_dir / "logs" / "t.log").write_text(f"UVM_ERROR @ 5: {CANARY} overflow\n")
    (scenario_dir / "s.toml").write_text(
        'id = "S1"\nprofile = "triage"\ngoal = "why"\nbudget = { steps = 8, evidence = 4 }\n'
        '[[record]]\nid = "log"\nkind = "log"\npath = "logs/t.log"\nshare = "local"\n'
    )

    async def ask(*options: str) -> str:
        async with stdio_session("s.toml", *options, cwd=scenario_dir) as session:
            found = await session.call_tool(
                "searchlogs", {"path": "log", "query": "UVM_ERROR", "limit": 5}
            )
            missing = await session.call_tool(
                "readspec", {"path": "log", "section": CANARY}
            )  # a refusal naming the record
            return f"{found.model_dump_json()}\n{missing.model_dump_json()}"

    remote = anyio.run(ask)
    assert CANARY not in remote and "withheld from this client" in remote
    local = anyio.run(ask, "--client-locality", "local")
    assert CANARY in local
