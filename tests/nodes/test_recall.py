"""Recall is labelled and remember needs a person: notes come back as `M` refs beside the evidence,
never in it; a hypothesis resting on notes alone is marked as from memory; a forgotten note
reaches no later request (a canary); a proposed note is saved only as a person decides it."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graph.build import compile_graph
from guards.budget import Refs, Spent
from guards.decide import GuardContext, decide
from guards.recall import RECALL
from nodes import memory
from scenario.registry import load_scenario
from tests.cli_process import warrant
from tests.fake_openai import FakeOpenAI
from tests.helpers import call, recorded, stop, write_manifest
from tests.nodes.choosers.test_model import route_env as route_env
from tests.nodes.memory_runs import (
    CANARY,
    CONFIG,
    LAB,
    recall,
    reply,
    saved,
    start,
    with_memory,
)

# The guard: recall is a control tool, decided by its own rules.


def context(
    scenario_dir: Path,
    *,
    memory_on: bool = True,
    evidence_refs: Collection[str] = frozenset(),
    **extra: Any,
) -> GuardContext:
    manifest = with_memory(scenario_dir) if memory_on else write_manifest(scenario_dir)
    spent = Spent(turn=1, deadline_at=100.0, evidence_refs=evidence_refs)
    return GuardContext(scenario=load_scenario(manifest), now=0.0, spent=spent, **extra)


def test_recall_needs_memory_goes_alone_and_is_never_repeated(scenario_dir):
    assert decide(recall("r1", "RST_CHK"), context(scenario_dir)).outcome == "recall"
    without = decide(recall("r1", "RST_CHK"), context(scenario_dir, memory_on=False))
    assert [r.code for r in without.refusals] == [
        "unknown_tool"
    ] and "no memory" in without.refusals[0].detail
    mixed = {
        "summary": "both",
        "tool_calls": [
            *recall("r1", "x")["tool_calls"],
            call("c1", "searchlogs", path="cc/t.log", query="x"),
        ],
    }
    assert [r.code for r in decide(mixed, context(scenario_dir)).refusals] == ["malformed_action"]
    again = decide(
        recall("r2", "rst_chk!"), context(scenario_dir, recalled_queries=frozenset({"rst_chk"}))
    )
    assert [r.code for r in again.refusals] == ["repeated_request"]
    strict = decide(recall("r1", "x", limit=True), context(scenario_dir))
    assert [(r.code, r.owner) for r in strict.refusals] == [("invalid_argument", "tool:recall")]


def test_recall_costs_no_evidence_and_m_refs_are_cited_apart(scenario_dir):
    spent = Refs(observations=6, recalled=2)  # the evidence budget (6) is spent
    assert (
        decide(recall("r1", "clk_en"), context(scenario_dir, evidence_refs=spent)).outcome
        == "recall"
    )
    assert "M2" in spent and "M3" not in spent and len(spent) == 8
    document = stop(
        "done",
        hypotheses=[
            {"statement": "seen before as BUG-1234", "refs": ["M1"]},
            {"statement": "clk_en was late", "refs": ["E1", "M2"]},
        ],
    )
    decided = decide(document, context(scenario_dir, evidence_refs=spent))
    assert [h.get("from_memory") for h in decided.hypotheses] == [True, None]


@settings(max_examples=150, deadline=None)
@given(
    names=st.lists(
        st.sampled_from([RECALL, "searchlogs", "readspec", "nope"]), min_size=1, max_size=4
    ),
    args=st.lists(
        st.dictionaries(
            st.sampled_from(["query", "limit", "path"]),
            st.one_of(st.text(max_size=5), st.integers(-2, 12), st.booleans()),
        ),
        min_size=4,
        max_size=4,
    ),
    memory_on=st.booleans(),
)
def test_a_batch_with_recall_is_a_recall_or_refused_never_a_read(
    tmp_path_factory, names, args, memory_on
):
    root = tmp_path_factory.mktemp("s")
    (root / "logs").mkdir()
    (root / "logs" / "t.log").write_text("x\n")
    (root / "spec.md").write_text("# S\n")
    (root / "hist.csv").write_text("run,date,test,status\n")
    document = {
        "summary": "s",
        "tool_calls": [
            {"id": f"k{i}", "name": name, "args": args[i]} for i, name in enumerate(names)
        ],
    }
    decision = decide(document, context(root, memory_on=memory_on))
    if RECALL in names:
        assert decision.outcome in ("recall", "refused")  # neither carries calls to run
        if decision.outcome == "recall":
            assert memory_on and set(names) == {RECALL}
            assert all(
                isinstance(r["limit"], int) and not isinstance(r["limit"], bool)
                for r in decision.recalls
            )


# A run: notes recalled as M refs, beside the evidence.


def test_recalled_notes_are_m_refs_never_evidence_and_only_m_is_marked_from_memory(
    scenario_dir, action_file
):
    store = InMemoryStore()
    note = saved(
        store, "FIFO overflow at 16 entries: seen in A2; tracked as BUG-77", "FIFO overflow"
    )
    saved(store, "unrelated: dma burst stalls", "DMA")
    script = action_file(
        [
            recall("r1", "fifo overflow"),
            call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"),
            stop(
                "done",
                hypotheses=[
                    {"statement": "known as BUG-77", "refs": ["M1"]},
                    {"statement": "the FIFO overflowed", "refs": ["E1", "M1"]},
                ],
            ),
        ]
    )
    final = recorded(start(with_memory(scenario_dir, evidence=1), script, store), CONFIG)
    handover = final["handover"]
    assert [item["ref"] for item in handover["evidence"]] == ["E1"]  # budget 1: recall took none
    (m1,) = handover["memory"]  # the stored report: which note and version, never its text
    assert (m1["ref"], m1["note"], m1["version"], m1["sha256"]) == (
        "M1",
        note["id"],
        1,
        note["sha256"],
    ) and "text" not in m1
    assert [(m["ref"], m["text"]) for m in final["memory"]] == [("M1", note["text"])]  # read now
    assert [h.get("from_memory") for h in handover["hypotheses"]] == [True, None]
    recalled = next(e for e in final["events"] if e["type"] == "recalled")
    assert recalled["payload"]["found"] == [{"ref": "M1", "note": note["id"], "version": 1}]
    assert not any(item["ref"] == "M1" for item in final["evidence"])


def test_a_forgotten_note_reaches_no_later_request(route_env, scenario_dir):
    """The canary: recalled at turn 1, forgotten while the run waits for a person, absent from
    every request after (the run's record keeps the note's id, never its text), and from the
    handover."""
    store = InMemoryStore()
    note = saved(store, CANARY, "RST_CHK clk_en late")
    server = FakeOpenAI(
        [
            json.dumps(recall("t1r1", "RST_CHK")),
            json.dumps(
                {"summary": "ask", "message": {"kind": "ask_user", "question": "Which seed?"}}
            ),
            json.dumps(recall("t3r1", "clk_en late")),
            json.dumps(stop("done", hypotheses=[{"statement": "seen before", "refs": ["M1"]}])),
        ]
    )
    route_env(server)
    with server.running():
        graph = start(with_memory(scenario_dir), "model", store)
        assert (
            "CANARY-7f3a" in server.prompts[1]
            and "## historical notes, not evidence" in server.prompts[1]
        )
        memory.forget(store, LAB, note["id"], "alice", 2.0)
        final = reply(graph, {"answer": "seed 7"})
    assert len(server.prompts) == 4
    assert "CANARY-7f3a" in server.prompts[1] and not any(
        "CANARY-7f3a" in p for p in server.prompts[2:]
    )
    assert (
        "M1: version 1" in server.prompts[3]
        and "forgotten since it was recalled" in server.prompts[3]
    )
    assert final["memory"][0]["forgotten"] and "text" not in final["memory"][0]
    assert "CANARY-7f3a" not in json.dumps(final["handover"]) and "CANARY-7f3a" not in json.dumps(
        final["memory"]
    )


def test_the_model_sees_recall_only_with_memory_and_its_schema_offers_it(route_env, scenario_dir):
    server = FakeOpenAI([json.dumps(stop("done"))] * 2)
    route_env(server, dialect="json_schema")
    with server.running():
        start(with_memory(scenario_dir), "model", InMemoryStore())
    schema = json.dumps(server.requests[0]["response_format"])
    assert '"const": "recall"' in schema and '"const": "remember"' in schema
    assert '"name": "recall"' in server.prompts[0]
    plain = FakeOpenAI([json.dumps(stop("done"))])
    route_env(plain, dialect="json_schema")
    with plain.running():
        graph = compile_graph(InMemorySaver(), InMemoryStore())
        graph.invoke(
            {"scenario": str(write_manifest(scenario_dir)), "chooser": "model"},
            {"configurable": {"thread_id": "p"}},
        )
    assert (
        "recall" not in json.dumps(plain.requests[0]["response_format"])
        and "historical notes" not in plain.prompts[0]
    )


def test_the_r42_memory_cassette_recalls_the_note_and_keeps_it_apart_from_e1_to_e3(tmp_path):
    """README "Skills and memory": the recorded model run replays against a note saved as the
    README saves it, recalls it as M1, reads E1–E3, proposes a note a person approves, and marks
    the statement resting on M1 alone as from memory."""
    root = Path(__file__).resolve().parents[2]
    db = str(tmp_path / "w.db")
    text = "RST_CHK clk_en late after release: seen in R38, R40-R42; tracked as BUG-1234"
    warrant(
        "memory",
        "save",
        text,
        "--signature",
        "RST_CHK clk_en late",
        "--project",
        "warrant-lab",
        "--db",
        db,
        cwd=root,
    )
    cassette = f"replay:{root / 'lab' / 'cassettes' / 'r42-memory.jsonl'}"
    waiting = warrant(
        "run", "R42-memory", "--chooser", cassette, "--db", db, "--json", "-q", cwd=root
    )
    assert waiting.returncode == 3, waiting.stderr
    thread = json.loads(waiting.stdout)["thread_id"]
    done = warrant(
        "resume", thread, "--approve", "--as", "alice", "--db", db, "--json", "-q", cwd=root
    )
    handover = json.loads(done.stdout)
    assert handover["status"] == "stopped", handover.get("chooser_stop_text")
    assert [item["ref"] for item in handover["evidence"]] == ["E1", "E2", "E3"]
    assert [(m["ref"], m["text"]) for m in handover["memory"]] == [("M1", text)]
    assert [h["refs"] for h in handover["hypotheses"]] == [["E1", "E2"], ["E3"], ["M1"]]
    assert [h.get("from_memory", False) for h in handover["hypotheses"]] == [False, False, True]
    assert (
        handover["remembered"][0]["by"] == "alice"
        and handover["skills"][0]["id"] == "triage/uvm-regression"
    )
    listed = json.loads(
        warrant("memory", "list", "--project", "warrant-lab", "--db", db, "--json", cwd=root).stdout
    )
    assert len(listed) == 2 and listed[1]["text"].startswith(
        "R42 reset_smoke: clk_en asserted 6 cycles"
    )


def test_a_child_investigation_has_no_memory(scenario_dir):
    """A child's `M` refs would not be its parent's: recall and remember stay with the parent."""
    from guards.action import DelegateTask
    from guards.delegation import child_scenario

    task = DelegateTask.model_validate(
        {"id": "t1", "goal": "g", "records": ["cc/t.log"], "budget": {"steps": 2, "evidence": 1}}
    )
    parent = load_scenario(with_memory(scenario_dir))
    assert parent.memory is not None and child_scenario(parent, task).memory is None


def test_a_manifest_naming_a_user_recalls_their_notes_too_and_no_one_elses(
    scenario_dir, action_file
):
    store = InMemoryStore()
    shared = saved(store, "FIFO overflow: shared note")
    alice = memory.save(
        store, memory.Scope("team", "alice"), "FIFO overflow: alice's own", "alice", 2.0
    )
    memory.save(store, memory.Scope("team", "bob"), "FIFO overflow: bob's own", "bob", 3.0)
    manifest = with_memory(scenario_dir)
    manifest.write_text(
        manifest.read_text().replace(
            'memory = { project = "team" }', 'memory = { project = "team", user = "alice" }'
        )
    )
    final = recorded(
        start(manifest, action_file([recall("r1", "fifo overflow"), stop("done")]), store), CONFIG
    )
    assert [(m["ref"], m["note"], m["text"]) for m in final["memory"]] == [
        ("M1", alice["id"], alice["text"]),
        ("M2", shared["id"], shared["text"]),
    ]
