"""The governed loop end to end, in-process, on the R42 lab and throwaway scenarios."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from graph.present.render import handover_markdown
from lab import LAB_DIR
from ledger.commit import commit
from ledger.context import WarrantContext
from ledger.store import EMPTY_CURSOR, space
from nodes.choosers import ScriptedChooser
from nodes.choosers.view import ChooserView, make_view
from tests.helpers import (
    R42_CALLS,
    R42_EVENTS,
    R42_HISTORY,
    R42_LOG,
    R42_TURNS,
    batch,
    call,
    recorded,
    run_embedded,
    stop,
    tool_call,
    write_manifest,
)

PROTECTED_TEXT = "PROTECTED DESIGN NOTES"


def refusal_codes(state):
    return [(refusal["code"], refusal["owner"]) for refusal in state["refusals"]]


def test_the_scripted_baseline_gathers_its_evidence_and_stops_on_its_last_turn():
    state = run_embedded("R42")
    evidence = state["evidence"]
    assert [(item["ref"], item["tool"]) for item in evidence] == [
        ("E1", "searchlogs"),
        ("E2", "readspec"),
        ("E3", "getrunhistory"),
        ("E4", "waveform"),
        ("E5", "changes"),
    ]
    assert evidence[1]["args"]["section"] == "reset_release"
    assert (state["status"], state["turn"]) == ("stopped", R42_TURNS)
    assert state["refusals"] == []


def test_the_handover_shows_the_specification_line_with_its_number():
    state = run_embedded("R42")
    e2 = state["evidence"][1]
    rst5 = next(line for line in e2["excerpt"] if line["text"].startswith("RST-5"))
    markdown = handover_markdown(state["handover"])
    assert f"L{rst5['line']:<5} {rst5['text']}" in markdown
    assert "no root cause" in markdown.lower() or "root cause: not established" in markdown.lower()


def test_the_handover_has_evidence_and_unknowns_and_no_root_cause_field():
    handover = run_embedded("R42")["handover"]
    assert {
        "thread_id",
        "scenario",
        "goal",
        "status",
        "evidence",
        "unknowns",
        "refusals",
        "hypotheses",
    } <= set(handover)
    assert not any("root" in key.lower() for key in handover)
    assert handover["unknowns"][0].startswith("Root cause: not established")
    assert any("fifo_basic.log was not examined" in unknown for unknown in handover["unknowns"])


def test_evidence_items_carry_record_sha256_and_numbered_bounded_excerpts(r42):
    e1 = run_embedded("R42")["evidence"][0]
    assert e1["record"] == R42_LOG and e1["sha256"] == r42.records[R42_LOG].sha256
    assert all(isinstance(line["line"], int) and len(line["text"]) <= 420 for line in e1["excerpt"])
    assert len(e1["excerpt"]) <= 20


def test_the_ledger_is_sequenced_and_complete():
    events = run_embedded("R42")["events"]
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    types = [event["type"] for event in events]
    assert types[0] == "admitted" and types[-2:] == ["stopped", "handover"]
    assert types.count("proposed") == R42_TURNS and types.count("executed") == len(R42_CALLS)
    # each call is recorded as executing (by the guard, before it runs) and then as executed
    ran = [(e["type"], e["payload"]["call_id"]) for e in events if e["type"].startswith("execut")]
    assert ran == [(kind, call_id) for call_id in R42_CALLS for kind in ("executing", "executed")]


@pytest.fixture
def lab_copy(tmp_path: Path) -> Path:
    """The real lab, copied, with a 10-step budget so a long adversarial file fits."""
    copy = tmp_path / "lab"
    shutil.copytree(LAB_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    manifest = copy / "R42.toml"
    manifest.write_text(manifest.read_text().replace("steps = 8", "steps = 10"))
    return manifest


def test_every_out_of_grant_proposal_gets_one_typed_refusal(lab_copy, action_file):
    chooser = action_file(
        [
            call("c1", "searchlogs", path=R42_LOG, query="reset_smoke", limit=True),
            call("c2", "readspec", path="lab/protected/design.txt", section="anything"),
            call("c3", "searchlogs", path="lab/runs/R43/reset_smoke.log", query="reset_smoke"),
            call("c4", "readspec", path="../protected/design.txt", section="x"),
            call("c5", "run_simulation", test="reset_smoke"),
            call("c6", "searchlogs", path=R42_LOG, query="reset_smoke"),
            call("c7", "searchlogs", path=R42_LOG, query="reset_smoke"),
            call("c6", "searchlogs", path=R42_LOG, query="UVM_ERROR"),
            "this line is not JSON",
            stop(),
        ]
    )
    state = run_embedded(str(lab_copy), chooser)
    assert refusal_codes(state) == [
        ("invalid_argument", "tool:searchlogs"),
        ("unapproved_record", "tool:readspec"),
        ("unapproved_record", "tool:searchlogs"),
        ("unapproved_record", "tool:readspec"),
        ("unknown_tool", "guard"),
        ("repeated_request", "guard"),
        ("duplicate_call_id", "guard"),
        ("malformed_action", "guard"),
    ]
    assert [item["ref"] for item in state["evidence"]] == ["E1"]
    assert {item["record"] for item in state["evidence"]} <= set(state["grant"]["records"])
    assert PROTECTED_TEXT not in json.dumps(state)
    assert state["status"] == "stopped"


def test_the_ninth_choice_under_an_eight_step_budget_ends_the_run(action_file):
    chooser = action_file(
        [call(f"c{n}", "searchlogs", path=R42_LOG, query=f"q{n}", limit=1) for n in range(1, 6)]
        + ["junk"] * 5
    )
    state = run_embedded("R42", chooser)
    assert state["status"] == "step_budget_exhausted"
    assert state["turn"] == 9
    assert state["refusals"][-1]["code"] == "step_budget_exhausted"
    assert state["refusals"][-1]["turn"] == 9
    assert len(state["evidence"]) == 5
    assert "handover" in state


def test_more_evidence_than_the_budget_is_refused(scenario_dir, action_file):
    manifest = write_manifest(scenario_dir, evidence=2)
    chooser = action_file(
        [
            batch(
                "three reads",
                tool_call("a", "searchlogs", path="cc/t.log", query="UVM"),
                tool_call("b", "readspec", path="cc/spec.md", section="fifo_depth"),
                tool_call("c", "getrunhistory", path="cc/hist.csv", test="fifo_smoke"),
            ),
            stop(),
        ]
    )
    state = run_embedded(str(manifest), chooser)
    assert refusal_codes(state) == [("evidence_budget_exhausted", "guard")] * 3
    assert [refusal["call"]["id"] for refusal in state["refusals"]] == ["a", "b", "c"]
    assert state["evidence"] == []


def test_a_batch_runs_one_task_per_call_and_numbers_evidence_in_call_order(
    scenario_dir, action_file
):
    chooser = action_file(
        [
            batch(
                "three reads",
                tool_call("a", "getrunhistory", path="cc/hist.csv", test="fifo_smoke"),
                tool_call("b", "readspec", path="cc/spec.md", section="fifo_depth"),
                tool_call("c", "searchlogs", path="cc/t.log", query="UVM_ERROR"),
            ),
            stop(),
        ]
    )
    state = run_embedded(str(write_manifest(scenario_dir)), chooser)
    assert [(item["ref"], item["call_id"]) for item in state["evidence"]] == [
        ("E1", "a"),
        ("E2", "b"),
        ("E3", "c"),
    ]
    executed = [event for event in state["events"] if event["type"] == "executed"]
    assert sorted(event["payload"]["call_id"] for event in executed) == ["a", "b", "c"]


def test_a_finished_run_resumed_runs_nothing_again():
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "done"}}
    graph.invoke({"scenario": "R42"}, config, durability="sync")
    first = recorded(graph, config)
    graph.invoke(None, config, durability="sync")
    again = recorded(graph, config)
    assert again["events"] == first["events"] and len(first["events"]) == R42_EVENTS
    assert again["evidence"] == first["evidence"] and len(first["evidence"]) == len(R42_CALLS)


def test_a_step_committed_again_after_a_crash_overwrites_what_it_wrote():
    store = InMemoryStore()
    receipt = {
        "ref": "E1",
        "kind": "observation",
        "call_id": "c1",
        "tool": "searchlogs",
        "args": {"path": "p", "query": "q", "limit": 20},
        "summary": "s",
        "body": None,
    }
    written = {
        "evidence": [receipt],
        "events": [{"type": "executed", "turn": 1, "payload": {"ref": "E1"}}],
    }
    first = commit(store, "t", EMPTY_CURSOR, written)
    again = commit(store, "t", EMPTY_CURSOR, written)
    assert first == again and first["events"] == 1 and first["observations"] == 1
    assert len(store.search(space("t", "events"))) == 1
    assert len(store.search(space("t", "evidence"))) == 1


def test_the_history_tool_reads_the_lab_history():
    state = run_embedded("R42")
    e3 = state["evidence"][2]
    assert e3["record"] == R42_HISTORY
    assert [line["text"][:3] for line in e3["excerpt"][1:]] == [f"R{n}" for n in range(35, 43)]


@dataclass
class Hostile:
    """Proposes values the checkpoint serializer cannot store as they are."""

    actor: str = "chooser:hostile"

    def choose(self, view: ChooserView):
        if view.turn == 1:
            return {"summary": "x\ud800", "message": {"kind": "stop", "text": "\ud800"}}
        if view.turn == 2:
            return call("c1", "searchlogs", path=R42_LOG, query="reset_smoke", limit=2**70)
        return stop()


def test_unstorable_proposals_are_recorded_as_text_and_refused(tmp_path):
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(tmp_path / "h.sqlite", check_same_thread=False))
    state = run_embedded(
        "R42",
        "hostile",
        checkpointer=saver,
        context=WarrantContext(choosers={"hostile": Hostile()}),
    )
    assert refusal_codes(state) == [
        ("malformed_action", "guard"),
        ("invalid_argument", "tool:searchlogs"),
    ]
    assert state["refusals"][1]["call"]["args"]["limit"] == "<int of 22 digits>"
    proposals = [
        event["payload"]["raw"] for event in state["events"] if event["type"] == "proposed"
    ]
    assert isinstance(proposals[0], str) and "\\ud800" in proposals[0]
    assert state["status"] == "stopped"


def test_the_view_is_a_snapshot_that_holds_no_reference_to_the_state():
    records = [{"id": "r", "kind": "log"}]
    evidence = [{"ref": "E1", "excerpt": [{"line": 1, "text": "x", "flags": []}]}]
    view = make_view(
        scenario="S",
        goal="g",
        turn=2,
        budget_left={"steps": 1},
        catalog=(),
        records=records,
        record=lambda: {"evidence": copy.deepcopy(evidence), "refusals": [], "unknowns": ["u"]},
    )
    records.append({"id": "later", "kind": "log"})
    assert len(view.records) == 1  # taken when the view was made
    view.evidence[0]["excerpt"].clear()
    assert len(evidence[0]["excerpt"]) == 1 and view.unknowns == ("u",)
    assert view.records[0] is not records[0]


def test_a_corrupt_gzip_log_is_a_failed_read_not_a_crash(scenario_dir):
    whole = gzip.compress(b"UVM_ERROR overflow\n" * 5000)
    (scenario_dir / "logs" / "t.log").write_bytes(whole[: len(whole) // 2])  # cut mid-stream
    script = [call("c1", "searchlogs", path="cc/t.log", query="UVM"), stop()]
    state = run_embedded(
        str(write_manifest(scenario_dir)),
        "cut",
        context=WarrantContext(choosers={"cut": ScriptedChooser(script)}),
    )
    [item] = state["evidence"]
    assert item["error"] == "record_unavailable"
    assert state["status"] == "stopped"
