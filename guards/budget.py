"""What is left of a run's budget at a choice: the one arithmetic the guard decides on, the model
node checks before paying for a request, and the chooser is shown."""

from __future__ import annotations

from dataclasses import dataclass

from contract.codes import Status


@dataclass(frozen=True)
class BudgetLeft:
    steps: int
    """Choices left, the one being made included: 0 or less, the step budget is spent."""
    evidence: int
    """Evidence items the run may still gather."""
    seconds: float
    """Until the deadline: 0 or less, it has passed."""

    @property
    def end(self) -> Status | None:
        """The status that ends the run at this choice, whatever is proposed: the step budget
        first, then the deadline; None while neither is spent."""
        if self.steps <= 0:
            return Status.STEP_BUDGET_EXHAUSTED
        if self.seconds <= 0:
            return Status.DEADLINE_PASSED
        return None


def budget_left(
    *, steps: int, evidence: int, turn: int, observations: int, deadline_at: float, now: float
) -> BudgetLeft:
    """The budget left at choice `turn` (1-based) with `observations` evidence items gathered."""
    return BudgetLeft(steps - turn + 1, evidence - observations, deadline_at - now)
