"""The guard's decision: one class per outcome, each carrying only what its outcome needs.

`Approved`, `NeedsApproval`, `Ask`, `Delegate`, `Remember`, `Recall`, `Stop`, `End`, `Refused`: the
guard node `match`es on them. `recorded_decision` writes one as state holds it
(`contract.shapes.RecordedDecision`), so what is decided and what is recorded have one owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, cast

from contract.codes import OBSERVATION, Outcome, Status
from contract.shapes import RecordedCall, RecordedDecision, RecordedFamily
from guards.action import DelegateTask, StopMessage
from guards.refusals import Refusal
from scenario.registry import Family, Record


@dataclass(frozen=True)
class ApprovedCall:
    """A call the guard approved, with its validated arguments and resolved record ids."""

    id: str
    name: str
    args: dict[str, Any]
    """The arguments as the tool's model validated them (`model_dump`): what is recorded, sealed
    and sent to the executor, which rebuilds the model from them without validating again."""
    records: dict[str, str]
    """Argument field → approved record id."""
    resolved: dict[str, Record]
    """Argument field → the record the registry resolved (what the executor will read)."""
    signature: str
    family: Family | None = None
    """A family tool's members, as the registry resolved them."""

    def recorded(self) -> RecordedCall:
        """The call as the recorded decision holds it (`contract.shapes.RecordedCall`)."""
        recorded: RecordedCall = {
            "id": self.id,
            "name": self.name,
            "args": self.args,
            "records": self.records,
        }
        if self.family is not None:
            recorded["family"] = recorded_family(self.family)
        return recorded

    def recorded_to_run(self, ref: str) -> RecordedCall:
        """The call approved to run now: with the evidence ref its receipt will have and the
        admitted records the executor reads (`sources`)."""
        sources = {field: record.model_dump() for field, record in self.resolved.items()}
        return {**self.recorded(), "ref": ref, "sources": sources}


# The decision: one class per outcome, each with only what that outcome carries. `outcome` is the
# `Outcome` value recorded in state (`contract.shapes.RecordedDecision`).


@dataclass(frozen=True)
class Approved:
    """Every call of the batch passed every check and runs now (outcome `execute`)."""

    calls: tuple[ApprovedCall, ...]
    outcome: ClassVar[Outcome] = Outcome.EXECUTE


@dataclass(frozen=True)
class NeedsApproval:
    """The batch passed every check, and some of its calls wait for a person (`approval`)."""

    calls: tuple[ApprovedCall, ...]
    needs_person: tuple[str, ...]
    """The ids of the calls (of `calls`) that wait for a person's decision."""
    outcome: ClassVar[Outcome] = Outcome.APPROVAL


@dataclass(frozen=True)
class Ask:
    """A question for a person: the run waits for the answer (`ask`), or goes on (`asked`)."""

    question: str
    blocking: bool = True

    @property
    def outcome(self) -> Outcome:
        return Outcome.ASK if self.blocking else Outcome.ASKED


@dataclass(frozen=True)
class Delegate:
    """Child investigations start, one per task (`delegate`)."""

    tasks: tuple[DelegateTask, ...]
    outcome: ClassVar[Outcome] = Outcome.DELEGATE


@dataclass(frozen=True)
class Remember:
    """A note proposed for memory (text, signature, refs), waiting for a person (`remember`)."""

    note: dict[str, Any]
    outcome: ClassVar[Outcome] = Outcome.REMEMBER


@dataclass(frozen=True)
class Recall:
    """A look into memory (`recall`): each recall call's id, query and limit."""

    recalls: tuple[dict[str, Any], ...]
    outcome: ClassVar[Outcome] = Outcome.RECALL


@dataclass(frozen=True)
class Stop:
    """The chooser stops (`stop`): its text and statements, the citations bound; a citation of a
    ref that does not exist is recorded as a refusal, and the stop stands."""

    stop: StopMessage
    hypotheses: tuple[dict[str, Any], ...]
    """The statements with their citations bound (`guards.citations`)."""
    refusals: tuple[Refusal, ...] = ()
    outcome: ClassVar[Outcome] = Outcome.STOP
    status: ClassVar[Status] = Status.STOPPED


@dataclass(frozen=True)
class End:
    """The run ends with `status` (a budget, the deadline, the refusal limit, the model)."""

    status: Status
    refusals: tuple[Refusal, ...]
    outcome: ClassVar[Outcome] = Outcome.END


@dataclass(frozen=True)
class Refused:
    """The proposal is refused; the chooser takes the next turn (`refused`)."""

    refusals: tuple[Refusal, ...]
    outcome: ClassVar[Outcome] = Outcome.REFUSED


Decision: TypeAlias = (
    Approved | NeedsApproval | Ask | Delegate | Remember | Recall | Stop | End | Refused
)
"""What the guard decided of one proposal."""


def refusals_of(decision: Decision) -> tuple[Refusal, ...]:
    """The refusals a decision records (a stop's, an end's or a refusal's; none otherwise)."""
    match decision:
        case Stop(refusals=refusals) | End(refusals=refusals) | Refused(refusals=refusals):
            return refusals
        case _:
            return ()


def recorded_family(family: Family) -> RecordedFamily:
    """A family as a decision and a receipt record it: its name, size and digest, and its ids
    only when listed (a glob's are the grant's: `Scenario.families`)."""
    recorded: RecordedFamily = {
        "name": family.name,
        "glob": family.glob,
        "members": len(family.members),
        "sha256": family.sha256,
        "share": family.share,
    }
    if family.glob is None:
        recorded["ids"] = list(family.ids)
    return recorded


def recorded_decision(
    decision: Decision, turn: int, first_ref: int, summary: str
) -> RecordedDecision:
    """The decision as state records it. An approved batch's calls carry the evidence refs their
    receipts will have (from `first_ref` = the run's observations + 1, in call order) and the
    admitted records the executor reads; a batch waiting for people keeps the proposal's summary,
    with which it is decided again."""
    calls: list[RecordedCall] = []
    extra: dict[str, Any] = {}
    match decision:
        case Approved(calls=approved):
            calls = [
                call.recorded_to_run(f"{OBSERVATION}{first_ref + index}")
                for index, call in enumerate(approved)
            ]
        case NeedsApproval(calls=approved):
            calls = [call.recorded() for call in approved]
        case Delegate(tasks=tasks):
            extra["tasks"] = [
                {"order": index, **task.model_dump()} for index, task in enumerate(tasks)
            ]
        case Remember(note=note):
            extra["note"] = note
    status = decision.status if isinstance(decision, Stop | End) else None
    return cast(
        "RecordedDecision",
        {
            "turn": turn,
            "outcome": decision.outcome.value,
            "calls": calls,
            **extra,
            "status": status and status.value,
            "summary": summary,
        },
    )
