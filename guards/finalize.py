"""How a run ended, decided in one place (seed 001 §23: run finalization owns the terminal
decision, not every local optional failure).

Nodes ask for an end — the guard when the chooser stops, a budget or the deadline is spent or too
many proposals were refused; the model node when the model keeps failing; a person's stop — and
write the `Status` they ask for. The handover node calls `finalize` once, with what the run
recorded, and publishes what it returns: the `ending` (the vocabulary people read: it tells a
chooser's own end from a person's stop and a deadline from the manifest's hard end), the status
it projects to (`contract.codes.status_of`: DESIGN §6's key, kept for `--json`), and the reasons
behind it. A call that failed — a tool error, an unreadable member, an MCP server down — was
recorded on its receipt and the run went on: it is a reason listed beside the ending, never the
ending itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contract.codes import Ending, RefusalCode, Status, status_of


@dataclass(frozen=True)
class EndFacts:
    """What the run recorded that decides its end."""

    asked: str | None
    """The status a node asked for; None when nothing did (the chooser's stop)."""
    stop_text: str
    """The chooser's stop text, or why a node ended the run."""
    stopped_by: Mapping[str, Any] | None
    tampered: bool
    hard_end_passed: bool
    """The manifest's `expires_at` is past."""
    evidence: Sequence[Mapping[str, Any]]
    """The run's receipts."""


@dataclass(frozen=True)
class Final:
    ending: Ending
    reasons: tuple[str, ...]

    @property
    def status(self) -> Status:
        """The handover's `status`: the ending's projection, never decided apart from it."""
        return status_of(self.ending)


def finalize(facts: EndFacts) -> Final:
    """The run's terminal state and the reasons behind it."""
    ending = Ending.TAMPERED if facts.tampered else _ending(_asked(facts.asked), facts)
    return Final(ending, (_why(ending, facts), *_beside(facts.evidence)))


def _asked(asked: str | None) -> Status:
    try:
        return Status(asked) if asked else Status.STOPPED
    except ValueError:
        return Status.STOPPED


def _ending(asked: Status, facts: EndFacts) -> Ending:
    """The ending a node's asked-for status means: what the run recorded tells the endings that
    share a status apart (a person's stop, the manifest's hard end)."""
    if asked is Status.STOPPED:
        return Ending.STOPPED if facts.stopped_by else Ending.COMPLETED
    if asked is Status.DEADLINE_PASSED:
        return Ending.EXPIRED if facts.hard_end_passed else Ending.DEADLINE
    meant = [ending for ending in Ending if status_of(ending) is asked]
    return meant[0] if meant else Ending.COMPLETED


def ended_as(handover: Mapping[str, Any]) -> str:
    """How a run ended, as people read it — `completed`, `stopped by human:ana`, `budget`, … —
    from the handover's `ending`; its `status` only where it has none (`awaiting_human`, a run
    not yet ended, or a handover written before endings)."""
    ending = handover.get("ending")
    if not ending:
        return str(handover.get("status", ""))
    stop = handover.get("stopped_by")
    if ending == Ending.STOPPED and stop:
        return f"{Ending.STOPPED.value} by {stop.get('by', 'a person')}"
    return str(ending)


def _why(ending: Ending, facts: EndFacts) -> str:
    said = facts.stop_text.strip()
    if ending is Ending.STOPPED and facts.stopped_by:
        stop = facts.stopped_by
        why = f": {stop['reason']}" if stop.get("reason") else ""
        return f"{stop.get('by', 'a person')} stopped the run{why}"
    fixed = {
        Ending.COMPLETED: f"The chooser ended the investigation: {said}"
        if said
        else "The chooser ended the investigation.",
        Ending.BUDGET: "The step budget was spent.",
        Ending.DEADLINE: "The run's deadline passed.",
        Ending.EXPIRED: "The manifest's hard end (expires_at) passed.",
        Ending.TAMPERED: "The run found values in its state that it did not write.",
    }
    return fixed.get(ending) or said or f"The run ended {ending.value}."


def _beside(evidence: Sequence[Mapping[str, Any]]) -> list[str]:
    """What failed along the way without ending the run: recorded on each call's receipt."""
    failed = [item for item in evidence if item.get("error")]
    unknown = [item["ref"] for item in failed if item["error"] == RefusalCode.OUTCOME_UNKNOWN]
    went_on = [item["ref"] for item in failed if item["error"] != RefusalCode.OUTCOME_UNKNOWN]
    reasons = []
    if went_on:
        reasons.append(
            f"{len(went_on)} call{'s' if len(went_on) > 1 else ''} failed and"
            f" {'were' if len(went_on) > 1 else 'was'} recorded on"
            f" {'their receipts' if len(went_on) > 1 else 'its receipt'} ({', '.join(went_on)});"
            " the run went on."
        )
    if unknown:
        reasons.append(
            f"Whether {', '.join(unknown)} took effect is unknown (sent before a crash, never"
            " sent again): a person must check."
        )
    return reasons
