"""State the run did not write is found and refused, whatever wrote it (here LangGraph's own
`update_state` and `Command`, as a server client or a database edit would): the run ends
`state_tampered` with a recorded refusal, and no forged value or outside byte reaches anything."""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Send

from graph.build import compile_graph
from graph.present.render import handover_markdown
from graph.runs.runner import resume
from lab import LAB_DIR
from ledger.context import WarrantContext
from ledger.integrity import LANE, lane_config, scope_in
from ledger.persistence.savers import open_run
from ledger.store import BODIES, EVIDENCE, space
from nodes.choosers import ScriptedChooser
from nodes.handover import unsealed
from scenario.registry import load_scenario
from tests.graph.tampering import (
    GATED,
    SECRET,
    approve,
    assert_refused_and_clean,
    config,
    executed_calls,
    forged_receipt,
    reject,
    waiting_run,
)
from tests.graph.tampering import db as db
from tests.helpers import R42_CALLS, recorded


def test_a_widened_grant_is_never_used(db):
    with open_run(db, "grant") as storage:
        graph = compile_graph(*storage)
        values = waiting_run(graph, "grant")
        grant = values["grant"]
        outside = dict(next(iter(grant["records"].values())))
        outside.update(
            id="lab/protected/design.txt",
            kind="spec",
            path=str(LAB_DIR / "protected" / "design.txt"),
        )
        widened = {**grant, "records": {**grant["records"], outside["id"]: outside}}
        [pending] = graph.get_state(config("grant")).interrupts
        reply = {"interaction_id": pending.value["interaction_id"], "decision": "approve"}
        graph.invoke(
            Command(update={"grant": widened}, resume={pending.id: reply}),
            config("grant"),
            durability="sync",
        )
        assert_refused_and_clean(graph.get_state(config("grant")).values)


def test_forged_evidence_never_reaches_the_handover(db):
    """A receipt of the run's record replaced in the store (as a database edit would): it is not
    the run's, the run ends `state_tampered`, and only the run's own receipts are reported."""
    with open_run(db, "evidence") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "evidence")
        assert [item["ref"] for item in recorded(graph, config("evidence"))["evidence"]] == ["E1"]
        storage.store.put(space("evidence", EVIDENCE), "E1", forged_receipt("E1"), index=False)
    # `warrant resume evidence --approve`
    finished = resume("evidence", db, lambda _: None, approve)
    assert_refused_and_clean(finished.values)
    stored = finished.values["evidence"]
    assert (stored[0]["ref"], stored[0]["summary"]) == ("E1", "FORGED")  # the forgery was read
    own = [item for item in stored if item["ref"] != "E1"]
    assert [item["call_id"] for item in own] == ["c2", "c3"]
    assert finished.values["handover"]["evidence"] == unsealed(own)  # the run's own, sealed


def test_a_forged_receipt_in_the_store_never_reaches_the_chooser(db):
    """A receipt replaced in the store while the run waits for a person is not shown to the
    chooser when the run goes on (as the ledger's seals are meant to keep it from a model)."""
    script = load_scenario(LAB_DIR / "R42-gated.toml").script
    seen: list[Any] = []

    class Watching(ScriptedChooser):
        def choose(self, view):
            seen.append(json.dumps(view.evidence))
            return super().choose(view)

    context = WarrantContext(choosers={"watching": Watching(script)})
    with open_run(db, "sees") as storage:
        graph = compile_graph(*storage)
        graph.invoke(
            {"scenario": GATED, "chooser": "watching"},
            config("sees"),
            durability="sync",
            context=context,
        )
        [pending] = graph.get_state(config("sees")).interrupts
        storage.store.put(space("sees", EVIDENCE), "E1", forged_receipt("E1"), index=False)
        reply = {"interaction_id": pending.value["interaction_id"], "decision": "approve"}
        graph.invoke(
            Command(resume={pending.id: reply}), config("sees"), durability="sync", context=context
        )
        values = recorded(graph, config("sees"))
    assert len(seen) == 4 and "FORGED" in json.dumps(values["evidence"])  # turns 3 and 4 came after
    assert all("FORGED" not in view for view in seen)
    assert values["handover"]["status"] == "state_tampered"


def test_an_edited_excerpt_is_never_shown(db):
    """A receipt's excerpt lives in the store as a body keyed by its sha256: a body edited there
    no longer has that digest, and is reported missing, never shown."""
    with open_run(db, "body") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "body")
        [receipt] = recorded(graph, config("body"))["evidence"]
        assert receipt["excerpt"] and receipt["body"]
        storage.store.put(
            BODIES, receipt["body"], {"body": [{"line": 1, "text": "FORGED", "flags": []}]}
        )
    finished = resume("body", db, lambda _: None, approve)
    handover = finished.values["handover"]
    assert "FORGED" not in json.dumps(finished.values)
    [shown] = [item for item in handover["evidence"] if item["ref"] == "E1"]
    assert (shown["excerpt"], shown.get("body_missing")) == ([], True)


def test_a_forged_task_for_the_executor_is_not_run(db, tmp_path):
    with open_run(db, "goto") as storage:
        graph = compile_graph(*storage)
        values = waiting_run(graph, "goto")
        record = dict(next(iter(values["grant"]["records"].values())))
        record.update(path=str(LAB_DIR / "protected" / "design.txt"))
        task = {
            "call": {
                "id": "z",
                "name": "searchlogs",
                "args": {"path": record["id"], "query": "PROTECTED"},
                "ref": "E1",
            },
            "profile": "triage",
            "records": {"path": record},
            "turn": 1,
            "manifest": values["grant"]["manifest"],
            "manifest_sha256": values["grant"]["manifest_sha256"],
            "deadline_at": values["deadline_at"],
            "call_s": 30,
        }
        graph.invoke(Command(goto=Send("execute", task)), config("goto"), durability="sync")
        final = graph.get_state(config("goto")).values
        if "handover" not in final:  # the approval still waits; the forged task ended nothing yet
            graph.invoke(None, config("goto"), durability="sync")
            final = graph.get_state(config("goto")).values
        assert SECRET not in json.dumps(final)
        assert final.get("tampered"), "the forged task was recorded"


def test_a_goal_rewritten_beside_the_run_is_not_reported(db):
    """A value written without the run's nodes (as a database edit would write it)."""
    with open_run(db, "edited") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "edited")
        graph.update_state(config("edited"), {"goal": "FORGED goal"}, as_node="admit")
    finished = resume("edited", db, lambda _: None)
    handover = finished.values["handover"]
    assert handover["status"] == "state_tampered"
    assert handover["goal"] == "Why did reset_smoke fail in regression run R42?"
    [refusal] = [r for r in handover["refusals"] if r["code"] == "state_tampered"]
    assert "goal" in refusal["detail"] and refusal["owner"] == "runtime"


def test_a_forged_handover_is_not_the_runs_and_is_recorded(db):
    with open_run(db, "fh") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "fh")
        graph.update_state(
            config("fh"), {"handover": {"status": "stopped", "evidence": [], "statement": "FORGED"}}
        )
    shown = resume("fh", db, lambda _: None)
    assert shown.handover["status"] == "state_tampered"
    assert "FORGED" not in json.dumps(shown.handover)
    assert_refused_and_clean(shown.values)


def test_sealed_values_and_tasks_copied_from_another_run_are_not_this_runs(db):
    """Seals cover their thread: the grant, an evidence item and an execute task of run P,
    copied into run G, are refused in G."""
    with open_run(db, "P") as storage:
        donor = compile_graph(*storage)
        donor.invoke({"scenario": "R42"}, config("P"), durability="sync")
        p_values = donor.get_state(config("P")).values
        tasks = [
            write
            for item in storage.saver.list(config("P"))
            for write in item.pending_writes
            if write[1] == "__pregel_tasks" and getattr(write[2], "node", None) == "execute"
        ]
    with open_run(db, "G") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "G")
        graph.invoke(Command(goto=Send("execute", tasks[0][2].arg)), config("G"), durability="sync")
        assert graph.get_state(config("G")).values.get("tampered")
    with open_run(db, "G2") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "G2")
        graph.update_state(
            config("G2"),
            {"grant": p_values["grant"], "seals": {"grant": p_values["seals"]["grant"]}},
        )
    assert resume("G2", db, lambda _: None).handover["status"] == "state_tampered"
    with open_run(db, "G3") as storage:  # P's receipt of c2, sealed for P, in G3's record
        graph = compile_graph(*storage)
        waiting_run(graph, "G3")
        p_receipt = storage.store.get(space("P", EVIDENCE), "E2").value
        assert p_receipt["call_id"] == "c2"
        storage.store.put(space("G3", EVIDENCE), "E1", p_receipt, index=False)
    handover = resume("G3", db, lambda _: None, reject).handover  # c2 never runs in G3
    assert handover["status"] == "state_tampered" and "c2" not in {
        e["call_id"] for e in handover["evidence"]
    }


def test_a_forged_turn_never_reaches_the_record(db):
    with open_run(db, "turn") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "turn")
        graph.update_state(config("turn"), {"turn": "FORGED-turn"})
    finished = resume("turn", db, lambda _: None)
    assert finished.handover["status"] == "state_tampered"
    assert "FORGED" not in json.dumps(finished.values["handover"])
    assert all(isinstance(event["turn"], int) for event in finished.values["events"])


def test_a_write_that_changes_nothing_but_drops_the_interrupt_leaves_the_person_asked(db):
    with open_run(db, "noop") as storage:
        graph = compile_graph(*storage)
        before = waiting_run(graph, "noop")
        graph.update_state(config("noop"), {"arrivals": []})
        assert not graph.get_state(config("noop")).interrupts  # LangGraph dropped it
    again = resume("noop", db, lambda _: None)
    assert [item["interaction_id"] for item in again.pending] == [
        item["interaction_id"] for item in before["pending"]
    ]
    assert "handover" not in again.values


def test_the_runs_own_values_put_back_out_of_step_end_it(db):
    """A seal proves who wrote a value, not when: an older sealed decision put back, or an
    earlier execute task sent again, is found by what no longer fits and ends the run."""
    with open_run(db, "old") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "old")
        history = list(graph.get_state_history(config("old")))
        first = next(
            s.values for s in reversed(history) if (s.values.get("decision") or {}).get("turn") == 1
        )
        graph.update_state(config("old"), {"decision": first["decision"]})
        graph.update_state(config("old"), {"seals": {"decision": first["seals"]["decision"]}})
    assert resume("old", db, lambda _: None).handover["status"] == "state_tampered"

    with open_run(db, "turn-back") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "turn-back")
        history = list(graph.get_state_history(config("turn-back")))
        first = next(s.values for s in reversed(history) if s.values.get("turn") == 1)
        graph.update_state(
            config("turn-back"), {"turn": 1, "seals": {"turn": first["seals"]["turn"]}}
        )
    assert resume("turn-back", db, lambda _: None).handover["status"] == "state_tampered"

    with open_run(db, "again") as storage:
        graph = compile_graph(*storage)
        graph.invoke({"scenario": "R42"}, config("again"), durability="sync")
        [task] = [
            write[2]
            for item in storage.saver.list(config("again"))
            for write in item.pending_writes
            if write[1] == "__pregel_tasks"
            and getattr(write[2], "node", None) == "execute"
            and write[2].arg["call"]["id"] == "c1"
        ]
        graph.invoke(Command(goto=task), config("again"), durability="sync")
        values = recorded(graph, config("again"))
    assert values["handover"]["status"] == "state_tampered"
    handovers = [e["type"] for e in values["events"]].count("handover")
    assert handovers == 2  # the first, then the record
    assert executed_calls(values) == R42_CALLS  # c1's receipt sent again is not recorded


def test_a_lane_named_in_a_callers_config_is_not_read():
    """A child's lane reaches its graph only as the `ChildLane` its delegating task makes; a lane a
    caller writes into the config (a string) moves no run out of its own scope: the waiting run
    takes its approval and runs the call, with nothing refused."""
    graph = compile_graph(InMemorySaver(), InMemoryStore())
    waiting_run(graph, "lane")
    [pending] = graph.get_state(config("lane")).interrupts
    reply = {"interaction_id": pending.value["interaction_id"], "decision": "approve"}
    laned = {"configurable": {"thread_id": "lane", "warrant_lane": "t1", LANE: "t1"}}
    graph.invoke(Command(resume={pending.id: reply}), laned, durability="sync")
    handover = graph.get_state(config("lane")).values["handover"]
    assert handover["status"] == "stopped" and handover["refusals"] == []
    assert scope_in(laned["configurable"]) == "lane"
    assert scope_in({"thread_id": "lane", **lane_config("t1")}) == "lane\x00t1"


def test_a_handover_that_kept_nothing_sealed_is_printed_not_a_traceback():
    """A run whose grant and ledger were not its own keeps neither scenario nor budget
    (`nodes.handover.trusted_view`): what it kept is printed (as `warrant resume` and `warrant
    show` print it), never a KeyError."""
    kept = {
        "thread_id": "crash-demo",
        "scenario": "?",
        "goal": "",
        "status": "state_tampered",
        "turns": 3,
        "budget": {},
        "statement": "Root cause: not established.",
        "evidence": [],
        "unknowns": ["Root cause: not established."],
        "refusals": [],
        "hypotheses": [],
        "chooser_stop_text": "",
    }
    shown = handover_markdown(kept)
    assert "**Status:** state_tampered\n" in shown and "No evidence was gathered." in shown
