"""The authority boundary under attack: a compromised chooser, hostile evidence, a broken guard.

Every corpus passage is embedded in a triage scenario (log, spec) and in an STA scenario (a
before/after report pair); the `adversary` chooser obeys whatever its evidence says.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from contract.errors import RecordRefusal
from scenario.registry import Record, Scenario
from tests.corpus.build import BUILDERS, SECRET_TEXT, Passage, passages
from tests.helpers import run_embedded
from tools.catalog import tools_of
from tools.excerpt import make_excerpt, make_line
from tools.flags import INSTRUCTION_LIKE

PASSAGES = passages()
CASES = [(profile, passage) for profile in BUILDERS for passage in PASSAGES]
TOOL_CODES = {"invalid_argument", "unapproved_record", "record_changed", "record_unavailable"}
"""Refused by the tool named in the call (its argument model or record registry); every other
code is the guard's (DESIGN §3, guards/refusals.py)."""
SHOWN_BY = {
    "triage": {"searchlogs", "readspec"},
    "sta": {"stasummary", "stadiff", "stapaths", "stapath"},
}
"""The tools whose evidence quotes a one-line passage (a split one is quoted where lines are)."""


def run_corpus(folder: Path, profile: str, passage: Passage) -> dict:
    return run_embedded(str(BUILDERS[profile](folder, passage)), "adversary")


def outside_grant(state: dict) -> set[str]:
    """Records that were read or executed on although the manifest does not approve them."""
    read = {
        source["record"]
        for item in state["evidence"]
        if item["kind"] == "observation"
        for source in item["sources"]
    }
    executed = {e["payload"]["record"] for e in state["events"] if e["type"] == "executed"}
    return (read | executed) - set(state["grant"]["records"])


def assert_contained(state: dict) -> None:
    """Nothing outside the grant ran or leaked, and the run ended with a handover."""
    assert "handover" in state
    assert not outside_grant(state)
    catalog = tools_of(state["grant"]["profile"])
    tools = {e["actor"] for e in state["events"] if e["type"] == "executed"}
    assert tools <= {f"tool:{name}" for name in catalog}
    assert SECRET_TEXT not in json.dumps(state)


def assert_documented(refusal: dict, profile: str) -> None:
    """A refusal carries its documented code and owner."""
    if refusal["code"] in TOOL_CODES:
        assert refusal["call"]["name"] in tools_of(profile)
        assert refusal["owner"] == f"tool:{refusal['call']['name']}", refusal
    else:
        assert refusal["owner"] == "guard", refusal
    assert refusal["detail"] and "\n" not in refusal["detail"]


def assert_paths_intact(state: dict) -> None:
    """Between paths, in a Description column or as a name, a passage hides and invents no path."""
    summaries = [item["summary"] for item in state["evidence"] if item["tool"] == "stasummary"]
    assert [summary.split(";")[0] for summary in summaries] == [
        "3 constrained paths to 3 endpoint(s) in 3 group/corner/mode/path type(s)"
    ] * 2


def carrier_lines(state: dict, passage: Passage) -> list[tuple[str, dict]]:
    """(tool, evidence line) for every evidence line quoting the passage."""
    carriers = {line.decode("utf-8", "replace").rstrip("\r")[:60] for line in passage.lines}
    return [
        (item["tool"], line)
        for item in state["evidence"]
        for line in item["excerpt"]
        if any(carrier and carrier in line["text"] for carrier in carriers)
    ]


def test_the_corpus_is_large_and_varied():
    shapes = Counter(passage.shape for passage in PASSAGES)
    assert len(PASSAGES) >= 60 and len(shapes) >= 12
    assert set(BUILDERS) == {"triage", "sta"}


@pytest.mark.parametrize(
    ("profile", "passage"), CASES, ids=[f"{profile}-{passage.id}" for profile, passage in CASES]
)
def test_a_compromised_chooser_obeying_injected_evidence_executes_nothing_outside_the_grant(
    profile, passage, tmp_path
):
    state = run_corpus(tmp_path, profile, passage)
    assert state["grant"]["profile"] == profile
    assert_contained(state)
    assert len(state["refusals"]) >= 1, "the adversary tried something the guard refused"
    for refusal in state["refusals"]:
        assert_documented(refusal, profile)
    shown = carrier_lines(state, passage)
    assert shown, "the adversary was shown the injected text, as quoted evidence"
    assert all(INSTRUCTION_LIKE in line["flags"] for _, line in shown), shown
    if len(passage.lines) == 1:
        assert {tool for tool, _ in shown} == SHOWN_BY[profile]
    if profile == "sta":
        assert_paths_intact(state)


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
    return Record(
        id=str(record_id),
        kind=kind,
        path=str(path),
        root=str(root),
        approval="none",
        share="any",
        sha256="0" * 64,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
    )


@pytest.mark.parametrize("profile", sorted(BUILDERS))
def test_the_suite_fails_when_the_record_registry_is_broken(profile, monkeypatch, tmp_path):
    monkeypatch.setattr(Scenario, "lookup", broken_lookup)
    state = run_corpus(tmp_path, profile, PASSAGES[0])
    assert outside_grant(state), "the adversary reached a record outside the grant"
    with pytest.raises(AssertionError):
        assert_contained(state)


def test_the_guard_property_fails_when_the_registry_is_broken(monkeypatch):
    from tests.guards import test_properties

    def permissive(self: Scenario, record_id: object, kind: str, tool: str) -> Record:
        return next(iter(self.records.values())).model_copy(update={"id": str(record_id)})

    monkeypatch.setattr(Scenario, "lookup", permissive)
    with pytest.raises(Exception):  # noqa: B017 - hypothesis reports the falsifying example
        test_properties.test_nothing_outside_the_grant_is_ever_approved()
