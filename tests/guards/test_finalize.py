"""`guards.finalize`: one place decides how a run ended — the status a node asked for, told apart
(a chooser's own end from a person's stop, a deadline from the manifest's hard end) — and lists
what failed along the way without ending the run."""

from __future__ import annotations

from typing import Any

import pytest

from contract.codes import Ending, Status, status_of
from guards.finalize import EndFacts, ended_as, finalize


def facts(asked: str | None, **given: Any) -> EndFacts:
    return EndFacts(
        asked=asked,
        stop_text=given.get("stop_text", ""),
        stopped_by=given.get("stopped_by"),
        tampered=given.get("tampered", False),
        hard_end_passed=given.get("hard_end_passed", False),
        evidence=given.get("evidence", []),
    )


@pytest.mark.parametrize(
    ("asked", "given", "status", "ending", "why"),
    [
        (None, {"stop_text": "done"}, Status.STOPPED, Ending.COMPLETED, "The chooser ended the investigation: done"),
        ("stopped", {}, Status.STOPPED, Ending.COMPLETED, "The chooser ended the investigation."),
        ("stopped", {"stopped_by": {"by": "alice", "reason": "wrong seed"}}, Status.STOPPED, Ending.STOPPED, "alice stopped the run: wrong seed"),
        ("step_budget_exhausted", {}, Status.STEP_BUDGET_EXHAUSTED, Ending.BUDGET, "The step budget was spent."),
        ("deadline_passed", {}, Status.DEADLINE_PASSED, Ending.DEADLINE, "The run's deadline passed."),
        ("deadline_passed", {"hard_end_passed": True}, Status.DEADLINE_PASSED, Ending.EXPIRED, "The manifest's hard end (expires_at) passed."),
        ("refusal_limit", {"stop_text": "3 refused in a row"}, Status.REFUSAL_LIMIT, Ending.REFUSED, "3 refused in a row"),
        ("model_failed", {"stop_text": "the model failed 3 times"}, Status.MODEL_FAILED, Ending.MODEL_FAILED, "the model failed 3 times"),
        ("capability_gap", {"stop_text": "too large"}, Status.CAPABILITY_GAP, Ending.CAPABILITY_GAP, "too large"),
        ("stopped", {"tampered": True, "stopped_by": {"by": "x"}}, Status.STATE_TAMPERED, Ending.TAMPERED, "The run found values in its state that it did not write."),
    ],
)  # fmt: skip
def test_each_end_asked_for_has_one_terminal_state_and_its_reason(
    asked, given, status, ending, why
):
    final = finalize(facts(asked, **given))
    assert (final.status, final.ending, final.reasons) == (status, ending, (why,))


def test_failed_calls_are_reasons_beside_the_ending_never_the_ending():
    evidence = [
        {"ref": "E1", "error": "tool_timeout"},
        {"ref": "E2", "error": None},
        {"ref": "E3", "error": "record_unavailable"},
        {"ref": "E4", "error": "outcome_unknown"},
    ]
    final = finalize(facts(None, stop_text="done", evidence=evidence))
    assert final.ending is Ending.COMPLETED
    assert final.reasons[1:] == (
        "2 calls failed and were recorded on their receipts (E1, E3); the run went on.",
        "Whether E4 took effect is unknown (sent before a crash, never sent again): a person must check.",
    )


def test_a_status_no_node_writes_is_not_taken_as_an_ending():
    final = finalize(facts("awaiting_humans_forever", stop_text="x"))
    assert final.status is Status.STOPPED and final.ending is Ending.COMPLETED


def test_every_ending_projects_to_one_contract_status_and_each_end_status_is_reached():
    """`status` (DESIGN §6) is the ending's projection: every ending has one, and every status an
    ended run can carry is some ending's (`awaiting_human` is no ending)."""
    projected = {status_of(ending) for ending in Ending}
    assert projected == set(Status) - {Status.AWAITING_HUMAN}


@pytest.mark.parametrize(
    ("handover", "said"),
    [
        ({"status": "stopped", "ending": "completed"}, "completed"),
        ({"status": "stopped", "ending": "stopped", "stopped_by": {"by": "human:ana"}}, "stopped by human:ana"),
        ({"status": "step_budget_exhausted", "ending": "budget"}, "budget"),
        ({"status": "awaiting_human"}, "awaiting_human"),
    ],
)  # fmt: skip
def test_people_read_the_ending_and_who_stopped_the_run(handover, said):
    assert ended_as(handover) == said
