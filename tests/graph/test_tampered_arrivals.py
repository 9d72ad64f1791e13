"""Arrivals and cursors the run did not leave: forged, copied or replayed arrivals end the run,
an older cursor put back ends it, and a forged cursor never rewrites the record."""

from __future__ import annotations

from typing import Any

import pytest

from graph.build import compile_graph
from graph.runs.runner import resume
from ledger.persistence.savers import open_run, open_saver
from ledger.read import events as record_events
from ledger.read import evidence as record_evidence
from ledger.store import EVENTS, position, space
from tests.graph.tampering import (
    approve,
    assert_refused_and_clean,
    config,
    executed_calls,
    forged_receipt,
    waiting_run,
)
from tests.graph.tampering import db as db
from tests.helpers import R42_LOG, recorded


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
