"""Property: whatever numbers a tool's result holds (NaN, ±inf, -0.0, floats of 1e16 or more,
integers past 64 bits, in nested lists and objects), its receipt goes through the real seam —
built, sealed, carried in a checkpoint, committed to the store, read back — and is still the run's
own on memory, SQLite and PostgreSQL: its seal holds, the ledger verifies, and the values read
back (by the documented typed forms) are the raw values the tool returned."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from langgraph.checkpoint.base import LATEST_VERSION, Checkpoint

from contract.codes import EventKind
from graph.runs.ledger import ledger_break
from ledger.bodies import receipt_digest, with_body_ref
from ledger.commit import commit
from ledger.context import event
from ledger.integrity import item_intact, label, seal_update
from ledger.persistence.savers import Storage, open_saver
from ledger.read import events, evidence, sealed_or_not
from ledger.store import ARRIVALS, EMPTY_CURSOR, EVENTS, EVIDENCE
from nodes.evidence import evidence_item
from scenario.registry import Record
from tests.helpers import one_record
from tests.tools.test_storable import decoded, results, same
from tools.excerpt import Excerpt, make_line

AT = 1_800_000_000.0
SCOPES = itertools.count(1)


@pytest.fixture(scope="module", params=["memory", "sqlite", "postgres"])
def storage(request, tmp_path_factory) -> Iterator[Storage]:
    if request.param == "memory":
        db = "memory"
    elif request.param == "sqlite":
        db = str(tmp_path_factory.mktemp("values") / "runs.sqlite")
    else:
        db = request.getfixturevalue("module_postgres_url")
    with open_saver(db) as opened:
        yield opened


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Record:
    folder = tmp_path_factory.mktemp("record")
    return one_record(folder, "h.csv", "history", "run,date,test,status\nA1,2026-01-01,t,FAIL\n")


def receipt(record: Record, computed: dict[str, Any]) -> dict[str, Any]:
    """The receipt the executor writes for an analysis returning `computed`."""
    call = {"ref": "E1", "id": "c1", "name": "analyze", "args": {"query": "select 1"}}
    lines = [make_line(1, "a | b")]
    excerpt = Excerpt(summary="computed", lines=tuple(lines), truncated=False, computed=computed)
    item = evidence_item(call, {"tables.h": record}, excerpt, None, 1)
    return with_body_ref(dict(item))


def through_a_checkpoint(storage: Storage, scope: str, arrival: dict[str, Any]) -> Any:
    """The sealed arrival put in a checkpoint of thread `scope` and read back from the saver."""
    saver = storage.saver
    version = saver.get_next_version(None, None)
    checkpoint = Checkpoint(
        v=LATEST_VERSION,
        id=str(uuid.UUID(int=next(SCOPES))),
        ts="2026-01-01T00:00:00+00:00",
        channel_values={ARRIVALS: [arrival]},
        channel_versions={ARRIVALS: version},
        versions_seen={},
        pending_sends=[],
        updated_channels=None,
    )
    config = {"configurable": {"thread_id": scope, "checkpoint_ns": ""}}
    saved = saver.put(config, checkpoint, {"source": "loop", "step": 1}, {ARRIVALS: version})
    loaded = saver.get_tuple(saved)
    assert loaded is not None
    return loaded.checkpoint["channel_values"][ARRIVALS][0]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=results)
def test_a_receipt_of_any_numbers_is_the_runs_own_after_every_store(storage, record, raw):
    scope = f"values-{next(SCOPES)}"
    item = receipt(record, {"rows": raw})
    assert same(decoded(item["computed"]["rows"]), raw)

    arrival = seal_update({ARRIVALS: [{"evidence": item}]}, scope)[ARRIVALS][0]
    carried = through_a_checkpoint(storage, scope, arrival)
    assert item_intact(label(scope, ARRIVALS), carried)

    done = event(
        EventKind.EXECUTED,
        1,
        "tool:analyze",
        AT,
        call_id="c1",
        ref="E1",
        receipt=receipt_digest(item),
    )
    cursor = commit(storage.store, scope, EMPTY_CURSOR, {EVIDENCE: [item], EVENTS: [done]})
    (stored,) = evidence(storage.store, scope, cursor)
    assert sealed_or_not([stored], scope, EVIDENCE) == ([stored], [])
    assert same(decoded(stored["computed"]["rows"]), raw)
    values = {
        **seal_update({"cursor": cursor}, scope),
        "events": events(storage.store, scope, cursor),
        "evidence": [stored],
    }
    assert ledger_break(scope, values) is None


def test_the_typed_forms_are_what_every_store_gives_back(storage, record):
    """One receipt of each form, read back as written (not only as decoded)."""
    scope = f"values-{next(SCOPES)}"
    rows = [[float("nan"), float("inf"), float("-inf"), -0.0, 1e16, 2**64, 2**63 - 1, 0.25]]
    item = receipt(record, {"rows": rows})
    cursor = commit(storage.store, scope, EMPTY_CURSOR, {EVIDENCE: [item]})
    (stored,) = evidence(storage.store, scope, cursor)
    assert stored["computed"]["rows"] == [
        [
            {"$float": "NaN"},
            {"$float": "Infinity"},
            {"$float": "-Infinity"},
            {"$float": "-0.0"},
            {"$float": "1e+16"},
            {"$int": "18446744073709551616"},
            2**63 - 1,
            0.25,
        ]
    ]
