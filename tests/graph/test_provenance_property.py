"""A property: a canary planted in any record marked local, read by any triage tool in the real
graph, reaches no sink outside the machine — the request to a remote model route, a remote MCP
client of `warrant mcp serve`, the arguments of an MCP server not marked local, a note saved for
other runs. Which records are local, where the canary stands and which tools read what are drawn
by hypothesis (derandomized in CI); what counts as read comes from the scripted calls, never from
the code under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from graph.mcp.session import answered
from guards.provenance import local_egress, words_provenance
from ledger.context import WarrantContext
from nodes.choosers import ScriptedChooser
from nodes.choosers.projector import assemble
from nodes.choosers.route import Route
from nodes.choosers.view import make_view
from tests.helpers import recorded

CANARY = "Qz4propertyCanary"
REMOTE = Route(model="m", locality="remote")
RECORDS = {
    "log": ("log", "t.log"),
    "spec": ("spec", "s.md"),
    "hist": ("history", "h.csv"),
}
CALLS = {
    "searchlogs": ("log", {"query": "UVM_ERROR"}),
    "logsummary": ("log", {}),
    "readspec": ("spec", {"section": "fifo_depth"}),
    "getrunhistory": ("hist", {"test": "fifo_smoke"}),
}


def _write(root: Path, local: set[str], where: str) -> Path:
    """The canary in every local record only (on the lines the tools read, or in ids and names)."""

    def planted(rid: str, spot: str) -> str:
        return CANARY if rid in local and where == spot else "plainword"

    (root / "t.log").write_text(
        f"UVM_INFO a.sv(1) @ 10: env [X] start {planted('log', 'text')}\n"
        f"UVM_ERROR b.sv(2) @ 20: env.chk [{planted('log', 'ids')}] overflow"
        f" {planted('log', 'text')}\n"
    )
    (root / "s.md").write_text(
        f"# Spec {planted('spec', 'ids')}\n\n## fifo_depth\nThe FIFO holds 16 entries"
        f" {planted('spec', 'text')}.\n"
    )
    (root / "h.csv").write_text(
        "run,date,test,status,signature\n"
        f"A1,2026-01-01,fifo_smoke,FAIL,{planted('hist', 'ids')} {planted('hist', 'text')}\n"
    )
    lines = ['id = "PP"', 'profile = "triage"', 'goal = "Why did fifo_smoke fail?"']
    lines.append("budget = { steps = 10, evidence = 8 }")
    for rid, (kind, path) in RECORDS.items():
        share = "local" if rid in local else "any"
        lines += ["[[record]]", f'id = "{rid}"', f'kind = "{kind}"', f'path = "{path}"']
        lines.append(f'share = "{share}"')
    (root / "m.toml").write_text("\n".join(lines) + "\n")
    return root / "m.toml"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    local=st.sets(st.sampled_from(sorted(RECORDS)), min_size=1),
    tools=st.lists(st.sampled_from(sorted(CALLS)), min_size=1, max_size=4, unique=True),
    where=st.sampled_from(["text", "ids"]),
)
def test_a_local_canary_reaches_no_sink_outside_the_machine(tmp_path_factory, local, tools, where):
    root = tmp_path_factory.mktemp("pp")
    manifest = _write(root, local, where)
    script: list[dict[str, Any]] = [
        {
            "summary": tool,
            "tool_calls": [
                {"id": f"c{n}", "name": tool, "args": {"path": CALLS[tool][0], **CALLS[tool][1]}}
            ],
        }
        for n, tool in enumerate(tools)
    ]
    script.append({"summary": "s", "message": {"kind": "stop", "text": "done"}})
    graph = compile_graph(InMemorySaver(), InMemoryStore())
    config = {"configurable": {"thread_id": "pp"}}
    context = WarrantContext(choosers={"s": ScriptedChooser(script)})
    graph.invoke({"scenario": str(manifest), "chooser": "s"}, config, context=context)
    state = recorded(graph, config)
    read_local = {CALLS[tool][0] for tool in tools} & local  # the reference: what was read
    evidence = state["evidence"]
    assert {item["record"] for item in evidence} == {CALLS[tool][0] for tool in tools}

    # A remote model route's request.
    view = make_view(
        scenario="PP",
        goal="Why did fifo_smoke fail?",
        turn=len(tools) + 1,
        budget_left={"steps": 3, "evidence": 3, "seconds": 60},
        catalog=(),
        records=[{"id": rid, "kind": kind} for rid, (kind, _) in RECORDS.items()],
        record=lambda: {
            "evidence": evidence,
            "refusals": [],
            "unknowns": [],
            "handoffs": [],
            "notes": [],
        },
    )
    grant = {"records": {rid: {"share": "local" if rid in local else "any"} for rid in RECORDS}}
    request = assemble(view, grant, REMOTE).text
    # A remote MCP client of `warrant mcp serve`.
    clients = [answered(item, "remote", "pp") for item in evidence]
    outside = [request, *(f"{c.text}\n{c.content}" for c in clients)]
    assert all(CANARY not in text for text in outside)
    quoted = "\n".join(line["text"] for item in evidence for line in item["excerpt"])
    assert (CANARY in quoted) == (where == "text" and bool(read_local)) or where == "ids"
    # The chooser's words (an MCP call's arguments, a note) carry what it was shown.
    local_read = state["cursor"]["local_read"]
    assert set(local_read) == read_local
    assert (local_egress("srv", "remote", local_read) is None) == (not read_local)
    assert local_egress("srv", "local", local_read) is None
    assert words_provenance(local_read).share == ("local" if read_local else "any")
