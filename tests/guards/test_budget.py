"""The budget left at a choice: one arithmetic for the guard, the model node and the view."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contract.codes import Status
from guards.budget import budget_left


def test_the_step_budget_is_spent_after_the_last_choice_and_before_the_deadline_is_checked():
    left = budget_left(steps=8, evidence=6, turn=9, observations=2, deadline_at=10.0, now=20.0)
    assert (left.steps, left.evidence, left.end) == (0, 4, Status.STEP_BUDGET_EXHAUSTED)
    left = budget_left(steps=8, evidence=6, turn=8, observations=6, deadline_at=10.0, now=10.0)
    assert (left.steps, left.evidence, left.end) == (1, 0, Status.DEADLINE_PASSED)
    left = budget_left(steps=8, evidence=6, turn=8, observations=6, deadline_at=10.0, now=9.5)
    assert (left.seconds, left.end) == (0.5, None)


@given(
    steps=st.integers(1, 100),
    turn=st.integers(1, 120),
    deadline_at=st.floats(0, 1e6),
    now=st.floats(0, 1e6),
)
def test_a_choice_ends_the_run_exactly_past_the_steps_or_at_the_deadline(
    steps, turn, deadline_at, now
):
    end = budget_left(
        steps=steps, evidence=1, turn=turn, observations=0, deadline_at=deadline_at, now=now
    ).end
    if turn > steps:
        assert end is Status.STEP_BUDGET_EXHAUSTED
    elif now >= deadline_at:
        assert end is Status.DEADLINE_PASSED
    else:
        assert end is None
