"""A delegated child and a record family: a child may read a family only when its task is granted
every member; otherwise its family call is refused like any record outside its grant, and the run
still hands over. Ground truth is counted here, with a regex over the generated logs."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from contract.codes import EventKind, RefusalCode, Status
from graph.build import compile_graph
from graph.runs.lanes import child_lanes
from guards.action import DelegateTask
from guards.delegation import child_scenario
from ledger.context import WarrantContext
from ledger.members import forget_members
from nodes.unknowns import unknowns_of
from scenario.registry import load_scenario
from tests.cli_process import run_json, warrant
from tests.helpers import call, recorded, run_embedded, scenario_head, stop
from tools.logs import familypool

GLOB = "runs/*.log"
LOGS = {
    "a.log": [
        "UVM_INFO @ 0: reporter [RNTST] Running test a",
        "UVM_ERROR tb/sb.sv(10) @ 500:"
        " uvm_test_top.env.sb [SB_MISMATCH] a: read 0x10 expected 0x1 got 0x2",
        "TEST FAILED",
    ],
    "b.log": ["UVM_INFO @ 0: reporter [RNTST] Running test b", "TEST PASSED"],
    "c.log": [
        "UVM_INFO @ 0: reporter [RNTST] Running test c",
        "UVM_ERROR tb/sb.sv(10) @ 700:"
        " uvm_test_top.env.sb [SB_MISMATCH] c: read 0x20 expected 0x3 got 0x4",
        "TEST FAILED",
    ],
}
MEMBERS = [f"runs/{name}" for name in sorted(LOGS)]
SUMMARY = re.compile(r"(\d+) member\(s\): (\d+) pass, (\d+) fail")


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def toml_value(value: Any) -> str:
    """A JSON-shaped value as a TOML inline value."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)


def tables(name: str, documents: list[dict[str, Any]]) -> str:
    return "".join(
        f"\n[[{name}]]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in doc.items())
        for doc in documents
    )


def scenario(root: Path, records: list[str], child: list[dict[str, Any]], approval: str = "none"):
    """Three logs under `runs/`, approved by one glob; main delegates one task over `records`,
    whose child follows `child`, then stops."""
    (root / "runs").mkdir()
    for name, lines in LOGS.items():
        (root / "runs" / name).write_text("\n".join(lines) + "\n")
    task = {
        "id": "t1",
        "goal": "child t1",
        "records": records,
        "budget": {"steps": 3, "evidence": 2},
    }
    delegate = {"summary": "delegate", "message": {"kind": "delegate", "tasks": [task]}}
    manifest = root / "scenario.toml"
    manifest.write_text(
        scenario_head("CHF", "Which tests failed?", steps=10, evidence=6, deadline_s=600)
        + textwrap.dedent(f"""\
        [children]
        max = 2
        depth = 1
        [[record]]
        glob = "{GLOB}"
        kind = "log"
        approval = "{approval}"
        """)
        + tables("script", [delegate, stop("main done")])
        + tables("children.script", [{"task": "t1", **doc} for doc in child])
    )
    return manifest


def failing(root: Path) -> int:
    """The independent count: logs whose own lines say TEST FAILED."""
    return sum(
        bool(re.search(rb"^TEST FAILED$", (root / member).read_bytes(), re.MULTILINE))
        for member in MEMBERS
    )


TRIAGE = call("c1", "triage", family=GLOB)


def assert_triaged_by_child(handover: dict[str, Any], root: Path) -> None:
    assert handover["status"] == Status.STOPPED
    [item] = handover["evidence"]
    assert (item["ref"], item["lane"], item["lane_ref"]) == ("E1", "t1", "E1")
    assert item["tool"] == "triage" and item["record"] == GLOB and item["error"] is None
    assert item["family"]["glob"] == GLOB and item["family"]["members"] == len(LOGS)
    members, passed, failed = map(int, SUMMARY.search(item["summary"]).groups())
    assert (members, failed, passed) == (len(LOGS), failing(root), len(LOGS) - failing(root))
    [child] = handover["children"]
    assert child["evidence"] == ["E1"] and child["refusals"] == []
    assert not [note for note in child["unknowns"] if "was not examined" in note]


def test_a_child_granted_every_member_triages_the_family(tmp_path):
    manifest = scenario(tmp_path, MEMBERS, [TRIAGE, stop("child done")])
    state = run_embedded(str(manifest))
    assert_triaged_by_child(state["handover"], tmp_path)
    assert not [note for note in state["handover"]["unknowns"] if "was not examined" in note]


def test_a_child_granted_one_member_is_refused_the_family_and_the_run_hands_over(tmp_path):
    manifest = scenario(tmp_path, MEMBERS[:1], [TRIAGE, stop("child done")])
    state = run_embedded(str(manifest), thread="one")
    handover = state["handover"]
    assert handover["status"] == Status.STOPPED and handover["evidence"] == []
    [child] = handover["children"]
    assert child["status"] == Status.STOPPED
    assert [(r["code"], r["owner"]) for r in child["refusals"]] == [
        (RefusalCode.UNAPPROVED_RECORD, "tool:triage")
    ]
    assert f"{GLOB!r} is not a record family" in child["refusals"][0]["detail"]
    assert f"Approved log record {MEMBERS[0]} was not examined." in child["unknowns"]


def test_a_child_granted_one_member_is_refused_a_list_of_the_others(tmp_path):
    listed = call("c1", "searchfamily", family=MEMBERS, query="UVM_ERROR")
    manifest = scenario(tmp_path, MEMBERS[:1], [listed, stop("child done")])
    [child] = run_embedded(str(manifest))["handover"]["children"]
    assert [r["code"] for r in child["refusals"]] == [RefusalCode.UNAPPROVED_RECORD]


def test_a_task_naming_the_family_is_refused_by_the_guard_and_the_run_hands_over(tmp_path):
    manifest = scenario(tmp_path, [GLOB], [TRIAGE, stop("child done")])
    handover = run_embedded(str(manifest))["handover"]
    assert handover["status"] == Status.STOPPED and "children" not in handover
    [refusal] = handover["refusals"]
    assert refusal["code"] == RefusalCode.UNAPPROVED_RECORD
    assert f"{GLOB!r}, a record family of scenario CHF" in refusal["detail"]


def test_the_cli_runs_a_child_triaging_the_family(tmp_path):
    manifest = scenario(tmp_path, MEMBERS, [TRIAGE, stop("child done")])
    result = warrant("run", str(manifest), "--db", "memory", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    handover = run_json("run", str(manifest), "--db", "memory", cwd=tmp_path)
    assert_triaged_by_child(handover, tmp_path)


def test_a_childs_family_call_waits_for_a_person_and_resumes_on_sqlite(tmp_path):
    manifest = scenario(tmp_path, MEMBERS, [TRIAGE, stop("child done")], approval="human")
    db = str(tmp_path / "w.sqlite")
    started = warrant(
        "run", str(manifest), "--db", db, "--thread", "fam", "--json", "-q", cwd=tmp_path
    )
    assert started.returncode == 3, started.stderr
    [pending] = json.loads(started.stdout)["pending"]
    assert pending["lane"] == "t1" and pending["call"]["args"]["family"] == GLOB
    forget_members()  # as a new process: the members are read back from the SQLite store
    handover = run_json("resume", "fam", "--approve", "--db", db, cwd=tmp_path)
    assert_triaged_by_child(handover, tmp_path)
    assert warrant("events", "fam", "--verify", "--db", db, cwd=tmp_path).returncode == 0


def test_a_childs_lane_records_its_grant_with_the_familys_members(tmp_path):
    manifest = scenario(tmp_path, MEMBERS, [TRIAGE, stop("child done")])
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "lane"}}
    graph.invoke({"scenario": str(manifest)}, config, durability="sync", context=WarrantContext())
    values = recorded(graph, config)
    [lane] = child_lanes(graph.store, "lane", values)
    admitted = next(event for event in lane.events if event["type"] == EventKind.ADMITTED)
    assert [record["id"] for record in admitted["payload"]["records"]] == MEMBERS
    assert lane.broken() is None


@pytest.mark.parametrize(
    ("granted", "families"),
    [(MEMBERS, {GLOB: tuple(MEMBERS)}), (MEMBERS[::-1], {GLOB: tuple(MEMBERS)}), (MEMBERS[1:], {})],
)
def test_a_childs_grant_carries_only_the_families_it_is_granted_whole(tmp_path, granted, families):
    manifest = scenario(tmp_path, granted, [stop()])
    task = DelegateTask.model_validate(
        {"id": "t1", "goal": "g", "records": granted, "budget": {"steps": 1, "evidence": 1}}
    )
    carved = child_scenario(load_scenario(manifest), task)
    assert carved.families == families and list(carved.records) == granted


def test_a_family_receipt_whose_glob_the_grant_does_not_name_vouches_for_no_member():
    """A grant rebuilt from the ledger (`nodes.handover.trusted_view`) names no family."""
    grant = {"records": {member: {"kind": "log"} for member in MEMBERS}}
    receipt = {"ref": "E1", "sources": [], "family": {"name": GLOB, "glob": GLOB, "members": 3}}
    notes = unknowns_of({"grant": grant}, [receipt])
    assert [note for note in notes if "was not examined" in note] == [
        f"Approved log record {member} was not examined." for member in MEMBERS
    ]
