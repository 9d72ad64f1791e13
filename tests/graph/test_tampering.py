"""State the run did not write is found and refused, whatever wrote it (here LangGraph's own
`update_state` and `Command`, as a server client or a database edit would): the run ends
`state_tampered` with a recorded refusal, and no forged value or outside byte reaches anything."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, Send

from graph.build import compile_graph
from graph.present.render import handover_markdown
from graph.runs.runner import resume
from lab import LAB_DIR
from ledger.context import WarrantContext
from ledger.integrity import LANE, lane_config, scope_in
from ledger.persistence.savers import open_run, open_saver
from ledger.read import events as record_events
from ledger.read import evidence as record_evidence
from ledger.store import BODIES, EVENTS, EVIDENCE, position, space
from nodes.choosers import ScriptedChooser
from nodes.handover import unsealed
from scenario.registry import load_scenario
from tests.helpers import R42_LOG, recorded

GATED = str(LAB_DIR / "R42-gated.toml")
SECRET = "PROTECTED DESIGN NOTES"


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "t.sqlite")
    return request.getfixturevalue("postgres_url")


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def waiting_run(graph: Any, thread: str) -> dict[str, Any]:
    graph.invoke({"scenario": GATED}, config(thread), durability="sync")
    snapshot = graph.get_state(config(thread))
    assert snapshot.interrupts, "R42-gated waits for an approval"
    return snapshot.values


def approve(_kind: str) -> dict[str, Any]:
    return {"decision": "approve"}


def reject(_kind: str) -> dict[str, Any]:
    return {"decision": "reject"}


def forged_receipt(ref: str) -> dict[str, Any]:
    """A receipt as the store keeps it (its excerpt a body, by digest), with a seal the run's key
    never made."""
    return {
        "ref": ref,
        "call_id": "x9",
        "kind": "observation",
        "tool": "searchlogs",
        "args": {},
        "record": R42_LOG,
        "sha256": "0" * 64,
        "sources": [],
        "summary": "FORGED",
        "body": None,
        "lines": 0,
        "truncated": False,
        "flags": [],
        "error": None,
        "turn": 1,
        "seal": "0" * 64,
    }


def executed_calls(values: dict[str, Any]) -> list[str]:
    return [e["payload"]["call_id"] for e in values["events"] if e["type"] == "executed"]


def assert_refused_and_clean(values: dict[str, Any]) -> None:
    handover = values["handover"]
    assert handover["status"] == "state_tampered"
    assert [r["code"] for r in handover["refusals"]].count("state_tampered") == 1
    assert SECRET not in json.dumps(values)
    shown = handover_markdown(handover)  # what `warrant show` prints, whatever the run kept
    assert "**Ended:** tampered" in shown and SECRET not in shown
    assert all("FORGED" not in json.dumps(item) for item in handover["evidence"])


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
    assert executed_calls(values) == ["c1", "c2", "c3"]  # c1's receipt sent again is not recorded


def arrivals_of(graph: Any, thread: str, call_id: str) -> list[dict[str, Any]]:
    """The sealed arrivals an execute task of `thread` left for `call_id` (its receipt and its
    `executed` event), from the run's checkpoint history."""
    return next(
        snapshot.values["arrivals"]
        for snapshot in graph.get_state_history(config(thread))
        if any(
            item.get("evidence", {}).get("call_id") == call_id
            for item in snapshot.values.get("arrivals") or ()
        )
    )


def forged_arrivals(graph: Any, thread: str) -> list[dict[str, Any]]:
    event = {
        "type": "executed",
        "time": "2026-01-01T00:00:00.000+00:00",
        "turn": 2,
        "actor": "tool:searchlogs",
        "payload": {"call_id": "x9", "ref": "E2", "record": R42_LOG},
        "seal": "0" * 64,
    }
    return [
        {"evidence": forged_receipt("E2"), "seal": "0" * 64},
        {"event": event, "seal": "0" * 64},
    ]


def copied_arrivals(graph: Any, thread: str) -> list[dict[str, Any]]:
    """Run P's own sealed arrivals of c2 (sealed for P)."""
    graph.invoke({"scenario": "R42"}, config("P"), durability="sync")
    return arrivals_of(graph, "P", "c2")


def replayed_arrivals(graph: Any, thread: str) -> list[dict[str, Any]]:
    """The run's own arrivals of c1, already committed, put back."""
    return arrivals_of(graph, thread, "c1")


@pytest.mark.parametrize("arrivals", [forged_arrivals, copied_arrivals, replayed_arrivals])
def test_arrivals_the_run_did_not_leave_end_it(db, arrivals):
    """What tasks leave for the next node to commit (`arrivals`), written beside the run:
    forged, copied from another run, or the run's own put back. None of it is committed, and the
    run ends `state_tampered` with the refusal naming it."""
    with open_run(db, "arr") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "arr")
        graph.update_state(config("arr"), {"arrivals": arrivals(graph, "arr")})
    finished = resume("arr", db, lambda _: None)
    assert_refused_and_clean(finished.values)
    [refusal] = [r for r in finished.handover["refusals"] if r["code"] == "state_tampered"]
    assert "arrivals" in refusal["detail"]
    assert executed_calls(finished.values) == ["c1"]  # as before: the approval of c2 was pending
    assert [(item["ref"], item["call_id"]) for item in finished.values["evidence"]] == [
        ("E1", "c1")
    ]
    assert [e["seq"] for e in finished.values["events"]] == list(
        range(1, len(finished.values["events"]) + 1)
    )


def test_an_older_cursor_put_back_ends_the_run(db):
    """The run's own sealed cursor of an earlier step, put back with its seal: the run must not
    write its record again from there (over the events and receipts committed since)."""
    with open_run(db, "back") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "back")
        before = recorded(graph, config("back"))
        history = list(graph.get_state_history(config("back")))
        older = next(s.values for s in reversed(history) if s.next == ("execute",))  # before c1 ran
        assert older["cursor"]["events"] < before["cursor"]["events"]
        graph.update_state(
            config("back"),
            {"cursor": older["cursor"], "seals": {"cursor": older["seals"]["cursor"]}},
        )
    finished = resume("back", db, lambda _: None)
    if finished.pending:  # asked again: approve, so that the run writes on
        finished = resume("back", db, lambda _: None, approve)
    assert finished.handover["status"] == "state_tampered"
    count = before["cursor"]["events"]
    with open_saver(db) as storage:  # read the store itself: the state's cursor is the older one
        assert (
            record_events(storage.store, "back", before["cursor"])[:count] == before["events"]
        )  # nothing committed was rewritten
        assert record_evidence(storage.store, "back", before["cursor"])[0] == before["evidence"][0]


def test_a_forged_cursor_never_rewrites_the_record(db):
    """A cursor the run did not write (fewer events than committed): the run ends
    `state_tampered`, and the events it committed are never written over."""
    with open_run(db, "fc") as storage:
        graph = compile_graph(*storage)
        waiting_run(graph, "fc")
        before = recorded(graph, config("fc"))
        cursor = before["cursor"]
        graph.update_state(config("fc"), {"cursor": {**cursor, "events": 3, "observations": 0}})
    finished = resume("fc", db, lambda _: None)
    assert finished.handover["status"] == "state_tampered"
    with open_run(db, "fc") as storage:
        rows = [
            storage.store.get(space("fc", EVENTS), position(n))
            for n in range(1, cursor["events"] + 1)
        ]
    assert [row.value if row else None for row in rows] == before["events"]


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
