"""A run's child lanes, as readers show them: each child's ledger, found through the handoffs
the run received (whose cursors vouch for each child's ledger) and, for a child still running
(waiting for a person), through the run's `delegated` events."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore

from contract.codes import EventKind
from graph.runs.ledger import chain_break
from ledger.bodies import receipt_digest
from ledger.integrity import child_scope
from ledger.read import sealed_or_not
from ledger.record import RunRecord
from ledger.store import EVENTS, HANDOFFS, cursor_of

_PROBE = 256
"""Events read at once from a running child's lane, whose count no cursor records yet."""


@dataclass(frozen=True)
class Lane:
    name: str
    """The child's lane (`t1`, `t1/t2`)."""
    scope: str
    events: list[dict[str, Any]]
    cursor: Mapping[str, Any] | None
    """The child's cursor as its handoff recorded it; None while the child runs."""

    def broken(self) -> str | None:
        """Where this lane's ledger breaks, in one line, or None."""
        head = self.cursor.get("head") if self.cursor is not None else None
        if broken := chain_break(self.events, head):
            return f"lane {self.name}: {broken}"
        if self.cursor is not None and len(self.events) != self.cursor.get("events", 0):
            return f"lane {self.name}: the store holds {len(self.events)} of the {self.cursor.get('events', 0)} events its handoff recorded"
        if foreign := sealed_or_not(self.events, self.scope, EVENTS)[1]:
            return f"lane {self.name}: event {foreign[0].get('seq')} was not written by this child"
        return None


def child_lanes(store: BaseStore, thread: str, values: Mapping[str, Any]) -> list[Lane]:
    """Every child lane of a run, depth first in order of delegation."""
    return list(_lanes(store, thread, thread, cursor_of(values), values.get("events") or []))


def _lanes(
    store: BaseStore,
    thread: str,
    scope: str,
    cursor: Mapping[str, Any],
    ledger: list[dict[str, Any]],
) -> Iterator[Lane]:
    record = RunRecord(store, scope)
    received = record.sealed_or_not(record.handoffs(cursor), HANDOFFS)[0]
    handed = {document["lane"] for document in received}
    for document in received:
        name, recorded = document["lane"], document["cursor"]
        scope_of_lane = child_scope(thread, name)
        lane = Lane(
            name, scope_of_lane, RunRecord(store, scope_of_lane).new_events(0, recorded), recorded
        )
        yield lane
        yield from _lanes(
            store, thread, lane.scope, cursor_of({"cursor": lane.cursor}), lane.events
        )
    parent = scope.partition("\x00")[2]
    for event in ledger:
        if event.get("type") != EventKind.DELEGATED:
            continue
        task_id = event["payload"]["task"]["id"]
        name = f"{parent}/{task_id}" if parent else task_id
        if name not in handed:
            handed.add(name)
            running = child_scope(thread, name)
            yield Lane(name, running, _probed(store, running), None)


def _probed(store: BaseStore, scope: str) -> list[dict[str, Any]]:
    """A running child's events, read until the first the store lacks."""
    found: list[dict[str, Any]] = []
    while True:
        batch = RunRecord(store, scope).new_events(len(found), {"events": len(found) + _PROBE})
        found += batch
        if len(batch) < _PROBE:
            return found


def handoff_break(receipts: list[dict[str, Any]], lanes: list[Lane]) -> str | None:
    """Where a receipt the run received from a child is not the one that child's `executed` event
    recorded (under the child's own ref and call id), in one line, or None."""
    executed = {
        (lane.name, event["payload"].get("ref")): event["payload"].get("receipt")
        for lane in lanes
        for event in lane.events
        if event["type"] == EventKind.EXECUTED
    }
    for item in receipts:
        if "lane" not in item or "call_id" not in item:
            continue  # main's own receipt, or a person's answer a child passed on
        recorded = executed.get((item["lane"], item.get("lane_ref")))
        if recorded is None or receipt_digest(as_child_had_it(item)) != recorded:
            return f"receipt {item.get('ref')} is not the one lane {item['lane']} recorded as {item.get('lane_ref')}"
    return None


def as_child_had_it(item: Mapping[str, Any]) -> dict[str, Any]:
    """A received receipt under the child's own ref and call id (`nodes.handoff` renumbers)."""
    lane = item["lane"]
    own = {key: value for key, value in item.items() if key not in ("lane", "lane_ref")}
    return own | {"ref": item["lane_ref"], "call_id": item["call_id"].removeprefix(f"{lane}/")}


def laned(ledger: list[dict[str, Any]], lanes: list[Lane]) -> list[dict[str, Any]]:
    """Main's events and its children's, each with its lane (`""` for main), in time order (each
    lane's own order kept)."""
    every = [{**event, "lane": ""} for event in ledger]
    every += [{**event, "lane": lane.name} for lane in lanes for event in lane.events]
    return sorted(every, key=lambda event: event["time"])
