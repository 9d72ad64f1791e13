"""What is left of a run's budget at a choice: the one arithmetic the guard decides on, the model
node checks before paying for a request, and the chooser is shown. What the run has spent by a
choice is one value, `Spent`, its children's share included."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from contract.codes import ANSWER, OBSERVATION, RECOLLECTION, Status


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


@dataclass(frozen=True)
class Refs(Collection[str]):
    """The refs a run can cite, E1…En, H1…Hm and M1…Mk, without listing them: each kind is
    numbered without gaps, so its counts say which refs exist. M refs are recalled notes: citable,
    never evidence (the evidence budget counts observations only)."""

    observations: int
    answers: int = 0
    recalled: int = 0

    def __contains__(self, ref: object) -> bool:
        if not isinstance(ref, str) or not ref[1:].isdecimal() or ref[1:2] == "0":
            return False
        counts = {OBSERVATION: self.observations, ANSWER: self.answers, RECOLLECTION: self.recalled}
        return 1 <= int(ref[1:]) <= counts.get(ref[0], 0)

    def __iter__(self) -> Iterator[str]:
        yield from (f"{OBSERVATION}{n}" for n in range(1, self.observations + 1))
        yield from (f"{ANSWER}{n}" for n in range(1, self.answers + 1))
        yield from (f"{RECOLLECTION}{n}" for n in range(1, self.recalled + 1))

    def __len__(self) -> int:
        return self.observations + self.answers + self.recalled


@dataclass(frozen=True)
class Spent:
    """What a run has spent of its budget when a proposal arrives: its own choices, questions,
    evidence and refused choices, and what its children spent (handed off), which counts too."""

    turn: int
    """The turn of this proposal, from 1."""
    deadline_at: float
    """When the run's work deadline passes (waiting for people moves it on)."""
    evidence_refs: Collection[str] = frozenset()
    """The refs the run can cite; its observations (E refs) are the evidence spent."""
    questions_asked: int = 0
    refused_choices: int = 0
    """Earlier choices that were refused."""
    child_turns: int = 0
    """Steps this run's children spent: they count against its step budget."""
    child_questions: int = 0
    """Questions this run's children asked."""

    @property
    def steps(self) -> int:
        """The choices counted against the step budget, this one included."""
        return self.turn + self.child_turns

    @property
    def questions(self) -> int:
        return self.questions_asked + self.child_questions

    @property
    def observations(self) -> int:
        refs = self.evidence_refs
        if isinstance(refs, Refs):
            return refs.observations
        return sum(ref.startswith(OBSERVATION) for ref in refs)
