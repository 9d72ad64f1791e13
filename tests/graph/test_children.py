"""Child investigations: delegation decided by the guard, children run as subgraphs in their own
lanes under the run's one budget, handoffs received with the run's refs (issue: children)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver

from contract.codes import EventKind, RefusalCode, Status
from graph.build import compile_graph
from graph.runs.lanes import child_lanes, handoff_break
from lab import LAB_DIR
from ledger.context import WarrantContext
from nodes.choosers.view import ChooserView
from tests.cli_process import run_json, warrant
from tests.graph.delegations import LOGS, STOP, delegate, search, task
from tests.helpers import recorded, run_embedded

# The lab: R44 delegates one child per failing test.


def test_r44_delegates_one_child_per_failing_test_and_numbers_their_evidence_in_task_order():
    state = run_embedded("R44")
    handover = state["handover"]
    assert handover["status"] == Status.STOPPED
    assert [(item["ref"], item["lane"], item["lane_ref"]) for item in handover["evidence"]] == [
        (f"E{2 * index + n}", f"t{index + 1}", f"E{n}") for index in range(4) for n in (1, 2)
    ]
    assert [item["record"] for item in handover["evidence"][::2]] == LOGS
    children = handover["children"]
    assert [child["lane"] for child in children] == ["t1", "t2", "t3", "t4"]
    assert all(
        child["status"] == Status.STOPPED and child["spent"]["steps"] == 3 for child in children
    )
    assert children[0]["evidence"] == ["E1", "E2"] and children[3]["evidence"] == ["E7", "E8"]
    # the exact lines each receipt showed its child
    assert children[0]["read"][0] == {"ref": "E1", "record": LOGS[0], "lines": [[15, 15], [29, 29]]}
    # a child's words are its own: never main's hypotheses
    assert handover["hypotheses"] == [] and "Scripted child complete" in children[0]["stop_text"]
    spent = handover["turns"] + sum(child["spent"]["steps"] for child in children)
    assert spent == 14 <= handover["budget"]["steps"]
    types = [event["type"] for event in state["events"]]
    assert types.count(EventKind.DELEGATED) == 4 and types.count(EventKind.HANDED_OFF) == 4


def test_each_child_has_its_own_ledger_lane_with_each_call_executed_once():
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "lanes"}}
    graph.invoke({"scenario": "R44"}, config, durability="sync", context=WarrantContext())
    lanes = child_lanes(graph.store, "lanes", recorded(graph, config))
    assert [lane.name for lane in lanes] == ["t1", "t2", "t3", "t4"]
    for lane in lanes:
        executed = [
            event["payload"]["call_id"]
            for event in lane.events
            if event["type"] == EventKind.EXECUTED
        ]
        assert executed == ["c1", "c2"]
        assert lane.broken() is None


def test_every_received_receipt_is_the_one_its_child_executed():
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "received"}}
    graph.invoke({"scenario": "R44"}, config, durability="sync", context=WarrantContext())
    values = recorded(graph, config)
    lanes = child_lanes(graph.store, "received", values)
    receipts = values["evidence"]
    assert handoff_break(receipts, lanes) is None
    altered = [dict(item) for item in receipts]
    altered[2]["args"] = {**altered[2]["args"], "query": "UVM_FATAL"}
    assert handoff_break(altered, lanes) == "receipt E3 is not the one lane t2 recorded as E1"
    moved = [dict(item) for item in receipts]
    moved[0]["lane_ref"] = "E2"  # E1 claims to be t1's second receipt
    assert handoff_break(moved, lanes) == "receipt E1 is not the one lane t1 recorded as E2"
    assert handoff_break(receipts, lanes[1:]) == "receipt E1 is not the one lane t1 recorded as E1"


def test_a_file_chooser_delegates_like_the_script(tmp_path):
    path = tmp_path / "main.jsonl"
    path.write_text((LAB_DIR / "choosers" / "r44_delegate.jsonl").read_text())
    handover = run_embedded("R44", f"file:{path}")["handover"]
    assert [child["lane"] for child in handover["children"]] == ["t1", "t2"]
    [hypothesis] = handover["hypotheses"]
    assert hypothesis["refs"] == ["E1", "E3"]  # main's own statement, citing its children's refs


# The guard decides a delegation like any action.


# Children in the loop: their own subset, and the root's one budget.


@dataclass(frozen=True)
class Plan:
    """Main's documents by turn, and every child's (a child knows itself by its goal)."""

    main: tuple[Any, ...]
    child: tuple[Any, ...]
    actor: str = "chooser:plan"

    def choose(self, view: ChooserView) -> Any:
        plan = self.child if view.goal.startswith("child") else self.main
        return plan[view.turn - 1] if view.turn <= len(plan) else STOP


def run_plan(plan: Plan, thread: str = "plan") -> tuple[dict[str, Any], list[Any]]:
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    context = WarrantContext(choosers={"plan": plan})
    graph.invoke({"scenario": "R44", "chooser": "plan"}, config, durability="sync", context=context)
    values = recorded(graph, config)
    return values, child_lanes(graph.store, thread, values)


def test_a_child_asking_for_a_record_outside_its_subset_is_refused():
    plan = Plan(main=(delegate(task("t1", [LOGS[0]])),), child=(search("c1", LOGS[1]), STOP))
    values, lanes = run_plan(plan)
    [child] = values["handover"]["children"]
    assert [(refusal["code"], refusal["owner"]) for refusal in child["refusals"]] == [
        (RefusalCode.UNAPPROVED_RECORD, "tool:searchlogs")
    ]
    assert child["evidence"] == [] and values["handover"]["evidence"] == []
    assert not [event for event in lanes[0].events if event["type"] == EventKind.EXECUTED]


def test_a_child_may_not_delegate_at_the_default_depth():
    plan = Plan(
        main=(delegate(task("t1", [LOGS[0]])),),
        child=(delegate(task("t2", [LOGS[0]], steps=1)), STOP),
    )
    values, _ = run_plan(plan)
    [child] = values["handover"]["children"]
    assert [refusal["code"] for refusal in child["refusals"]] == [RefusalCode.DELEGATION_TOO_DEEP]


def test_main_sees_what_its_children_spent_and_cannot_repeat_their_calls():
    seen: list[dict[str, Any]] = []

    @dataclass(frozen=True)
    class Watching(Plan):
        def choose(self, view: ChooserView) -> Any:
            if not view.goal.startswith("child"):
                seen.append(
                    {"turn": view.turn, "left": view.budget_left, "handoffs": view.handoffs}
                )
            return super().choose(view)

    plan = Watching(
        main=(delegate(task("t1", [LOGS[0]], steps=3, evidence=2)), search("main1", LOGS[0])),
        child=(search("c1", LOGS[0]), STOP),
    )
    values, _ = run_plan(plan)
    assert seen[1]["left"]["steps"] == 20 - 1 - 2  # main's first turn, the child's two
    assert seen[1]["left"]["evidence"] == 12 - 1
    assert [handoff["lane"] for handoff in seen[1]["handoffs"]] == ["t1"]
    assert [refusal["code"] for refusal in values["handover"]["refusals"]] == [
        RefusalCode.REPEATED_REQUEST
    ]


QUERIES = ("UVM_ERROR", "RST_CHK", "TEST FAILED", "seed", "UVM_INFO", "irq", "dma", "clk_en")


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    def calls(prefix: str) -> Any:
        count = draw(st.integers(1, 3))
        return {
            "summary": "reads",
            "tool_calls": [
                {
                    "id": f"{prefix}{n}",
                    "name": "searchlogs",
                    "args": {
                        "path": draw(st.sampled_from(LOGS)),
                        "query": draw(st.sampled_from(QUERIES)),
                    },
                }
                for n in range(count)
            ],
        }

    def delegation(turn: int) -> Any:
        count = draw(st.integers(1, 4))
        return delegate(
            *(
                task(
                    f"d{turn}x{n}",
                    draw(st.lists(st.sampled_from(LOGS), min_size=1, max_size=2, unique=True)),
                    steps=draw(st.integers(1, 8)),
                    evidence=draw(st.integers(1, 6)),
                )
                for n in range(count)
            )
        )

    main = tuple(
        delegation(turn) if draw(st.booleans()) else calls(f"m{turn}_")
        for turn in range(1, draw(st.integers(1, 8)) + 1)
    )
    child = tuple(calls(f"c{turn}_") for turn in range(1, draw(st.integers(0, 6)) + 1))
    return Plan(main, child)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans())
def test_any_mix_of_delegations_and_calls_stays_within_the_root_budget(plan):
    values, lanes = run_plan(plan)
    budget = values["grant"]["budget"]
    executed = [
        event for lane in lanes for event in lane.events if event["type"] == EventKind.EXECUTED
    ]
    executed += [event for event in values["events"] if event["type"] == EventKind.EXECUTED]
    assert len(executed) <= budget["evidence"]
    assert len(values["handover"]["evidence"]) == len(executed)
    decided = [
        event
        for ledger in [values["events"], *(lane.events for lane in lanes)]
        for event in ledger
        if event["type"] == EventKind.PROPOSED
    ]
    ended = [
        event
        for ledger in [values["events"], *(lane.events for lane in lanes)]
        for event in ledger
        if event["type"] == EventKind.REFUSED
        and event["payload"]["code"] == RefusalCode.STEP_BUDGET_EXHAUSTED
    ]
    assert len(decided) - len(ended) <= budget["steps"]
    for child in values["handover"].get("children", []):
        assert len(child["evidence"]) <= child["budget"]["evidence"]
        assert child["spent"]["steps"] <= child["budget"]["steps"]


# Recovery and people.


def gated_r44(folder: Path, deadline_s: int = 3600) -> Path:
    """R44 in `folder`, where reading the reset_smoke log needs a person's approval."""
    for part in ("runs/R44", "spec"):
        shutil.copytree(LAB_DIR / part, folder / part)
    (folder / "history").mkdir()
    shutil.copy(LAB_DIR / "history" / "nightly.csv", folder / "history")
    text = (
        (LAB_DIR / "R44.toml").read_text().replace("deadline_s = 300", f"deadline_s = {deadline_s}")
    )
    text = text.replace(
        'path = "runs/R44/reset_smoke.log"\n',
        'path = "runs/R44/reset_smoke.log"\napproval = "human"\n',
    )
    manifest = folder / "R44.toml"
    manifest.write_text(text)
    return manifest


def test_a_childs_approval_waits_in_the_inbox_with_its_lane_and_resumes_that_child(tmp_path):
    manifest = gated_r44(tmp_path)
    db = str(tmp_path / "w.sqlite")
    started = warrant(
        "run", str(manifest), "--db", db, "--thread", "gated", "--json", "-q", cwd=tmp_path
    )
    assert started.returncode == 3, started.stderr
    [pending] = json.loads(started.stdout)["pending"]
    assert pending["lane"] == "t1" and pending["call"]["args"]["path"] == LOGS[0]
    inbox = json.loads(warrant("inbox", "--db", db, "--json", cwd=tmp_path).stdout)
    assert [row["interaction_id"] for row in inbox] == [pending["interaction_id"]]
    handover = run_json("resume", "gated", "--approve", "--db", db, cwd=tmp_path)
    assert handover["status"] == Status.STOPPED
    assert [child["status"] for child in handover["children"]] == [Status.STOPPED] * 4
    assert handover["evidence"][0]["lane"] == "t1" and handover["evidence"][0]["record"] == LOGS[0]
    assert warrant("events", "gated", "--verify", "--db", db, cwd=tmp_path).returncode == 0
    lanes = json.loads(warrant("events", "gated", "--db", db, "--json", cwd=tmp_path).stdout)
    executed = [
        (event["lane"], event["payload"]["call_id"])
        for event in lanes
        if event["type"] == EventKind.EXECUTED
    ]
    assert sorted(executed) == sorted((f"t{n}", c) for n in range(1, 5) for c in ("c1", "c2"))


def test_r44_on_postgresql_runs_its_children_in_parallel_under_one_worker(postgres_url, tmp_path):
    handover = run_json("run", "R44", "--db", postgres_url, "--thread", "pg44", cwd=tmp_path)
    assert [child["lane"] for child in handover["children"]] == ["t1", "t2", "t3", "t4"]
    assert len(handover["evidence"]) == 8
    verified = warrant("events", "pg44", "--verify", "--db", postgres_url, cwd=tmp_path)
    assert verified.returncode == 0 and "4 child lane(s)" in verified.stdout


def test_a_refused_task_is_shown_in_the_handover_as_a_task(tmp_path):
    """A delegation refused for its task (here a reused task id) renders without a tool name."""
    first = json.loads((LAB_DIR / "choosers" / "r44_delegate.jsonl").read_text().splitlines()[0])
    again = {
        "summary": "again",
        "message": {"kind": "delegate", "tasks": [first["message"]["tasks"][0]]},
    }
    stop = {"summary": "stop", "message": {"kind": "stop", "text": "done"}}
    script = tmp_path / "twice.jsonl"
    script.write_text("\n".join(json.dumps(line) for line in (first, again, stop)) + "\n")
    result = warrant(
        "run", "R44", "--chooser", f"file:{script}", "--db", "memory", "-q", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert (
        "`duplicate_task_id` · owner guard · task t1: task id 't1' was already delegated"
        in result.stdout
    )
