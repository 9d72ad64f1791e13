"""What the tampering tests share: the gated R42 run and its secret, the database a test runs
on (SQLite and PostgreSQL), a run waiting for its approval, a person's answers, a receipt the
run's key never sealed, and the check that a tampered run ended clean."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graph.present.render import handover_markdown
from lab import LAB_DIR
from tests.helpers import R42_LOG

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
