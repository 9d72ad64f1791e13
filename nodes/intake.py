"""People's input to a run, taken in by a step of its own around the guard's decision.

A stop request, the corrections given since the last turn (`nodes.control`) and the answers saved
for the run's open questions (`nodes.questions`) come from outside the run, not from its chooser:
the guard decides only the proposal (`nodes.guard`); the replies to what waited for people are
taken in by `nodes.replies`. They are read at the head of the guard's step (a safe point: nothing
decided yet), so a stop ends the run before anything is decided; answers and corrections are
adopted after the decision, in that order, so that the `H…` refs number as they did when the
guard took them in itself (a blocking question's answers first). One step, one checkpoint: the
governed step gets no slower.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from contract.codes import ANSWER, Status
from contract.state import WarrantState
from guards.decision import End
from ledger.context import WarrantContext, now
from ledger.integrity import run_scope
from ledger.store import cursor_of
from nodes.control import Asked, StopRequest, adopted_corrections, asked_of, stopped_update
from nodes.guard import guard, record
from nodes.questions import adopted
from nodes.replies import resolved


def guard_step(
    state: WarrantState, config: RunnableConfig, runtime: Runtime[WarrantContext]
) -> dict[str, Any]:
    """The guard's stage: people's input taken in, the proposal (or people's replies) decided."""
    at = now(runtime)
    scope = run_scope()
    if runtime.store is None:
        raise RuntimeError("the guard needs the run's store: compile the graph with one")
    asked = asked_of(runtime.store, scope, state.get("corrections", 0))
    if asked.stop:  # a safe point: nothing decided yet
        return _stopped(state, asked.stop, asked, scope, at)
    decide = resolved if state.get("pending") else guard
    update = decide(state, runtime.store, scope, at)
    update = _with_answers_adopted(update, state, runtime.store, scope, _answers(state, update), at)
    return _with_corrections(update, state, asked, _answers(state, update), at)


def _stopped(
    state: WarrantState, stop: StopRequest, asked: Asked, scope: str, at: float
) -> dict[str, Any]:
    """The run ends `stopped` as a person asked, with the corrections given before taken in."""
    ended = record(End(Status.STOPPED, ()), state, scope, at)
    taken = stopped_update(stop, state.get("turn", 0), at)
    withdrawn: dict[str, Any] = {"pending": []} if state.get("pending") else {}  # asked no more
    update = ended | taken | withdrawn | {"events": [*ended["events"], *taken["events"]]}
    return _with_corrections(update, state, asked, cursor_of(state)["answers"], at)


def _answers(state: WarrantState, update: dict[str, Any]) -> int:
    """The run's answers (`H…` refs) once this step's update is taken."""
    added: int = sum(item["ref"].startswith(ANSWER) for item in update.get("evidence", ()))
    answers: int = cursor_of(state)["answers"]
    return answers + added


def _with_corrections(
    update: dict[str, Any], state: WarrantState, asked: Asked, answers: int, at: float
) -> dict[str, Any]:
    """This step's update, with the corrections people gave since the last turn taken in."""
    taken = adopted_corrections(
        asked.corrections, state.get("corrections", 0), answers, state.get("turn", 0), at
    )
    return _taken_in(update, taken, "corrections")


def _with_answers_adopted(
    update: dict[str, Any],
    state: WarrantState,
    store: BaseStore,
    scope: str,
    answers: int,
    at: float,
) -> dict[str, Any]:
    """This step's update, with the answers saved for the run's open questions taken in."""
    asking = {
        **state,
        "open_questions": update.get("open_questions", state.get("open_questions", [])),
    }
    taken = adopted(asking, store, scope, answers, at)
    return _taken_in(update, taken, "open_questions")


def _taken_in(update: dict[str, Any], taken: Mapping[str, Any], channel: str) -> dict[str, Any]:
    """`update` with what people gave taken in after it: its evidence and events appended, and
    the channel that says how far it was taken (`corrections`, `open_questions`)."""
    if not taken:
        return update
    return update | {
        "evidence": [*update.get("evidence", ()), *taken["evidence"]],
        "events": [*update.get("events", ()), *taken["events"]],
        channel: taken[channel],
    }
