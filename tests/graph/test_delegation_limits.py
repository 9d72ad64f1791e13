"""A delegation decided by the guard on R44: within the limits, refused with its code, and
budgets carved from what children already spent."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from contract.codes import Outcome, RefusalCode
from guards.budget import Spent
from guards.decide import GuardContext, decide
from lab import LAB_DIR
from scenario.registry import Scenario, load_scenario
from tests.graph.delegations import HISTORY, LOGS, delegate, task


@pytest.fixture(scope="module")
def r44() -> Scenario:
    return load_scenario(LAB_DIR / "R44.toml")


def decided(document: dict[str, Any], scenario: Scenario, **context: Any) -> Any:
    """`document` decided at turn 1; `context` names what the run spent (`Spent`'s fields) or
    knows besides (`GuardContext`'s)."""
    spent = {name: value for name, value in context.items() if name in SPENT_FIELDS}
    known = {name: value for name, value in context.items() if name not in SPENT_FIELDS}
    run_spent = Spent(turn=1, deadline_at=100.0, **spent)
    return decide(document, GuardContext(scenario=scenario, now=0.0, spent=run_spent, **known))


SPENT_FIELDS = {spent_field.name for spent_field in fields(Spent)}


def test_a_delegation_within_the_limits_is_approved(r44):
    decision = decided(delegate(task("t1", [LOGS[0], HISTORY], steps=3, evidence=2)), r44)
    assert decision.outcome is Outcome.DELEGATE and [t.id for t in decision.tasks] == ["t1"]


@pytest.mark.parametrize(
    ("document", "context", "code"),
    [
        (delegate(task("t1", [LOGS[0]])), {"depth": 1}, RefusalCode.DELEGATION_TOO_DEEP),
        (
            delegate(*(task(f"t{n}", [LOGS[0]]) for n in range(5))),
            {},
            RefusalCode.TOO_MANY_CHILDREN,
        ),
        (
            delegate(task("t1", [LOGS[0]])),
            {"delegated": frozenset({"t1"})},
            RefusalCode.DUPLICATE_TASK_ID,
        ),
        (delegate(task("t1", ["lab/protected/design.txt"])), {}, RefusalCode.UNAPPROVED_RECORD),
        (
            delegate(task("t1", ["LAB/runs/R44/reset_smoke.log"])),
            {},
            RefusalCode.UNAPPROVED_RECORD,
        ),
        (delegate(task("t1", [LOGS[0]], steps=20)), {}, RefusalCode.CHILD_BUDGET_EXCEEDED),
        (
            delegate(task("t1", [LOGS[0]], steps=10), task("t2", [LOGS[1]], steps=10)),
            {},
            RefusalCode.CHILD_BUDGET_EXCEEDED,
        ),
        (delegate(task("t1", [LOGS[0]], evidence=13)), {}, RefusalCode.CHILD_BUDGET_EXCEEDED),
        (delegate(task("t1", [LOGS[0]], questions=4)), {}, RefusalCode.CHILD_BUDGET_EXCEEDED),
        (delegate(task("t1", [LOGS[0]]), task("t1", [LOGS[1]])), {}, RefusalCode.MALFORMED_ACTION),
        (delegate(task("t1", [LOGS[0]], steps=True)), {}, RefusalCode.MALFORMED_ACTION),
        (delegate(task("E1", [LOGS[0]])), {}, RefusalCode.MALFORMED_ACTION),
        (delegate(task("t1", [LOGS[0], LOGS[0]])), {}, RefusalCode.MALFORMED_ACTION),
        (delegate(), {}, RefusalCode.MALFORMED_ACTION),
    ],
)
def test_a_delegation_outside_the_limits_is_refused_with_its_code(r44, document, context, code):
    decision = decided(document, r44, **context)
    assert decision.outcome is Outcome.REFUSED  # a refusal carries no tasks
    assert [refusal.code for refusal in decision.refusals] == [code]


def test_budgets_carve_from_what_children_already_spent(r44):
    """20 steps: at turn 1, after children spent 15, 4 are left to carve (this choice counts)."""
    four = delegate(task("t9", [LOGS[0]], steps=4))
    assert decided(four, r44, child_turns=15).outcome is Outcome.DELEGATE
    refused = decided(four, r44, child_turns=16)
    assert [refusal.code for refusal in refused.refusals] == [RefusalCode.CHILD_BUDGET_EXCEEDED]
    assert "4 steps, 3 left to carve" in refused.refusals[0].detail
