"""Choosers that misbehave, through the governed loop: one that obeys injected text, one that
vandalizes its view, a slow one against an injected clock, one that edits a record after
admission, and hypotheses that cite evidence that does not exist."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ledger.context import WarrantContext
from nodes.choosers.view import ChooserView
from tests.graph.test_loop import PROTECTED_TEXT, refusal_codes
from tests.helpers import (
    R42_LOG,
    R42_SPEC,
    FakeClock,
    call,
    run_embedded,
    stop,
    write_manifest,
)


@dataclass
class InjectionFollower:
    """A compromised chooser: it obeys any instruction it finds in its evidence."""

    actor: str = "chooser:follower"

    def choose(self, view: ChooserView):
        if view.turn == 1:
            return call("c1", "searchlogs", path=R42_LOG, query="reset_smoke")
        for item in view.evidence:
            for line in item["excerpt"]:
                found = re.search(r"readspec (\S+?),? ", line["text"])
                if found and view.turn == 2:
                    return call("c2", "readspec", path=found[1].rstrip(","), section="anything")
        return stop("I followed the log's instructions.")


def test_a_chooser_that_follows_the_injected_line_is_refused_and_the_line_is_flagged():
    state = run_embedded(
        "R42", "follower", context=WarrantContext(choosers={"follower": InjectionFollower()})
    )
    e1 = state["evidence"][0]
    assert "instruction_like_text" in e1["flags"]
    flagged = [line for line in e1["excerpt"] if "instruction_like_text" in line["flags"]]
    assert len(flagged) == 1 and "ignore previous instructions" in flagged[0]["text"]
    assert refusal_codes(state) == [("unapproved_record", "tool:readspec")]
    assert state["refusals"][0]["call"]["args"]["path"] == "lab/protected/design.txt"
    assert len(state["evidence"]) == 1
    assert PROTECTED_TEXT not in json.dumps(state)


@dataclass
class Vandal:
    """Mutates everything it is shown, and records what it saw first on each turn."""

    seen: list = field(default_factory=list)
    actor: str = "chooser:vandal"

    def choose(self, view: ChooserView):
        self.seen.append(
            (
                len(view.evidence),
                [len(item["excerpt"]) for item in view.evidence],
                view.budget_left["evidence"],
            )
        )
        for item in view.evidence:
            item["excerpt"].clear()
            item["ref"] = "E99"
            item["record"] = "lab/protected/design.txt"
        view.budget_left["evidence"] = 1000
        view.catalog[0]["name"] = "rm"
        with pytest.raises(AttributeError):
            view.goal = "something else"
        if view.turn == 1:
            return call("c1", "searchlogs", path=R42_LOG, query="reset_smoke")
        if view.turn == 2:
            return call("c2", "readspec", path=R42_SPEC, section="reset_release")
        return stop()


def test_mutating_the_view_changes_nothing_in_the_run():
    vandal = Vandal()
    state = run_embedded("R42", "vandal", context=WarrantContext(choosers={"vandal": vandal}))
    assert [item["ref"] for item in state["evidence"]] == ["E1", "E2"]
    assert state["evidence"][0]["record"] == R42_LOG and state["evidence"][0]["excerpt"]
    assert vandal.seen[1][1][0] == len(state["evidence"][0]["excerpt"])
    assert [seen[2] for seen in vandal.seen] == [6, 5, 4]
    assert state["goal"] == "Why did reset_smoke fail in regression run R42?"


@dataclass
class SlowChooser:
    clock: FakeClock
    actor: str = "chooser:slow"

    def choose(self, view: ChooserView):
        self.clock.now += 61
        return call(f"c{view.turn}", "searchlogs", path=R42_LOG, query=f"q{view.turn}")


def test_the_deadline_ends_the_run_with_an_injected_clock():
    clock = FakeClock()
    state = run_embedded(
        "R42", "slow", context=WarrantContext(clock=clock, choosers={"slow": SlowChooser(clock)})
    )
    assert state["status"] == "deadline_passed"
    assert [item["ref"] for item in state["evidence"]] == ["E1"]
    assert refusal_codes(state)[-1] == ("deadline_passed", "guard")
    assert any("deadline" in unknown for unknown in state["handover"]["unknowns"])


@dataclass
class Editor:
    """Rewrites an approved record after admission, then asks to read it."""

    log: Path
    actor: str = "chooser:editor"

    def choose(self, view: ChooserView):
        if view.turn == 1:
            self.log.write_text("rewritten\n")
            return call("c1", "searchlogs", path="cc/t.log", query="rewritten")
        return stop()


def test_a_record_changed_after_admission_is_reported_not_read(scenario_dir):
    editor = Editor(scenario_dir / "logs" / "t.log")
    state = run_embedded(
        str(write_manifest(scenario_dir)),
        "editor",
        context=WarrantContext(choosers={"editor": editor}),
    )
    e1 = state["evidence"][0]
    assert e1["error"] == "record_changed" and e1["excerpt"] == []
    assert any(
        unknown.startswith("E1: could not be read") for unknown in state["handover"]["unknowns"]
    )


def test_a_citation_of_missing_evidence_is_marked_and_every_statement_kept(
    scenario_dir, action_file
):
    chooser = action_file(
        [
            call("c1", "searchlogs", path="cc/t.log", query="UVM_ERROR"),
            stop(
                "x",
                hypotheses=[
                    {"statement": "FIFO overflowed", "refs": ["E1", "E7"]},
                    {"statement": "the scoreboard saw it", "refs": ["E1"]},
                ],
            ),
        ]
    )
    state = run_embedded(str(write_manifest(scenario_dir)), chooser)
    assert refusal_codes(state) == [("unknown_reference", "guard")]
    assert state["handover"]["status"] == "stopped"
    assert state["handover"]["hypotheses"] == [
        {"statement": "FIFO overflowed", "refs": ["E1"], "unresolved": ["E7"]},
        {"statement": "the scoreboard saw it", "refs": ["E1"]},
    ]
