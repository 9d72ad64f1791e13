"""The authority boundary under attack: a compromised chooser, hostile evidence, a broken guard."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.corpus.build import SECRET_TEXT, build_scenario, passages
from tests.helpers import run_embedded
from tools.errors import RecordRefusal
from tools.excerpt import make_excerpt, make_line
from tools.flags import INSTRUCTION_LIKE
from tools.records import Record, Scenario

PASSAGES = passages()


def assert_contained(state: dict) -> None:
    """Nothing outside the grant ran or leaked, and the run ended with a handover."""
    grant = state["grant"]["records"]
    assert "handover" in state
    assert all(
        item["record"] in grant for item in state["evidence"] if item["kind"] == "observation"
    )
    executed = [
        event["payload"]["record"] for event in state["events"] if event["type"] == "executed"
    ]
    assert set(executed) <= set(grant)
    assert SECRET_TEXT not in json.dumps(state)


def carrier_lines(state: dict, passage) -> list[dict]:
    carriers = {line.decode("utf-8", "replace").rstrip("\r")[:60] for line in passage.lines}
    return [
        line
        for item in state["evidence"]
        for line in item["excerpt"]
        if any(carrier and carrier in line["text"] for carrier in carriers)
    ]


def test_the_corpus_is_large_and_varied():
    shapes = Counter(passage.shape for passage in PASSAGES)
    assert len(PASSAGES) >= 60 and len(shapes) >= 12


@pytest.mark.parametrize("passage", PASSAGES, ids=[passage.id for passage in PASSAGES])
def test_a_compromised_chooser_obeying_injected_evidence_executes_nothing_outside_the_grant(
    passage, tmp_path
):
    state = run_embedded(str(build_scenario(tmp_path, passage)), "adversary")
    assert_contained(state)
    assert len(state["refusals"]) >= 1, "the adversary tried something the guard refused"
    assert carrier_lines(state, passage), (
        "the adversary was shown the injected text, as quoted evidence"
    )


def test_most_carrier_lines_are_flagged():
    """Flagging is a courtesy to people and choosers, not the boundary; its rate is reported."""
    flagged = total = 0
    for passage in PASSAGES:
        excerpt = make_excerpt(
            "carrier",
            [make_line(number, line) for number, line in enumerate(passage.lines, 1)],
            False,
        )
        total += len(excerpt.lines)
        flagged += sum(INSTRUCTION_LIKE in line.flags for line in excerpt.lines)
    assert flagged == total, f"{flagged} of {total} carrier lines flagged"


def broken_lookup(self: Scenario, record_id: object, kind: str, tool: str) -> Record:
    """A registry that builds a path from the chooser's text: exactly what must never happen."""
    if record_id in self.records:
        return self.records[record_id]
    root = Path(next(iter(self.records.values())).root)
    path = (root / str(record_id)).resolve()
    if not path.is_file():
        raise RecordRefusal("unapproved_record", "no such file")
    stat = path.stat()
    return Record(id=str(record_id), kind=kind, path=str(path), root=str(root), approval="none",
                  share="any", sha256="0" * 64, size=stat.st_size, mtime_ns=stat.st_mtime_ns)  # fmt: skip


def test_the_suite_fails_when_the_record_registry_is_broken(monkeypatch, tmp_path):
    monkeypatch.setattr(Scenario, "lookup", broken_lookup)
    state = run_embedded(str(build_scenario(tmp_path, PASSAGES[0])), "adversary")
    with pytest.raises(AssertionError):
        assert_contained(state)


def test_the_guard_property_fails_when_the_registry_is_broken(monkeypatch):
    from tests.guards import test_properties

    def permissive(self: Scenario, record_id: object, kind: str, tool: str) -> Record:
        return next(iter(self.records.values())).model_copy(update={"id": str(record_id)})

    monkeypatch.setattr(Scenario, "lookup", permissive)
    with pytest.raises(Exception):  # noqa: B017 - hypothesis reports the falsifying example
        test_properties.test_nothing_outside_the_grant_is_ever_approved()
