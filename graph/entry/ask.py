"""One question through Entry: the candidates, the decision (the rules, or a model route's
choice checked against them), and a direct answer or a governed run. The decision and its reason
are recorded either way: in the run's `admitted` event, or, for a direct answer, as an `entered`
event in the store's Entry ledger (`warrant ask --json` names it)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from langgraph.store.base import BaseStore

from contract.codes import EventKind
from graph.build import store_of
from graph.entry.candidates import Candidates, EntryError, candidates
from graph.entry.direct import DirectAnswer, direct_answer
from graph.entry.model_entry import model_choice
from graph.runs.reading import reading_graph
from guards.entry import EntryDecision, Route, decide_entry
from ledger.store import ROOT, position
from nodes.choosers.route import Route as ModelRoute

ENTRIES = (ROOT, "entries")
"""The store's Entry ledger: one `entered` event per direct answer, by entry id."""


@dataclass(frozen=True)
class Asked:
    entry: str
    """This question's entry id (`ask-…`): the run's thread for research."""
    decision: EntryDecision
    candidates: Candidates
    answer: DirectAnswer | None = None
    """For a direct route."""
    actor: str = "entry:rules"
    """Who decided: `entry:rules`, or `entry:model` (a refused model choice is the rules')."""

    def decision_json(self) -> dict[str, Any]:
        shown = asdict(self.decision)
        shown["matched"] = list(self.decision.matched)
        return {"entry": self.entry, **shown}


def entry_id(question: str, at: float) -> str:
    digest = hashlib.sha256(f"{at:.6f}\x00{question}".encode()).hexdigest()[:12]
    return f"ask-{digest}"


def ask(
    question: str,
    given: str | None,
    forced: Route | None,
    at: float | None = None,
    model: ModelRoute | None = None,
) -> Asked:
    """Entry's decision on `question` (by `model`'s route when given and nothing is forced, else
    by the rules), and for a direct route its answer (nothing is recorded yet: `record_direct`, or
    the research run's admission, records it)."""
    if not question.strip():
        raise EntryError("the question is empty")
    found = candidates(given)
    decision = _decided(question, found, forced, model)
    if decision.route == "research":
        found.chosen(decision.scenario)  # never outside the roots
    actor = "entry:model" if decision.reason.startswith("the model: ") else "entry:rules"
    entry = entry_id(question, time.time() if at is None else at)
    if decision.route == "direct":
        answer = direct_answer(question, found.manifests.values())
        return Asked(entry, decision, found, answer, actor)
    return Asked(entry, decision, found, None, actor)


def _decided(
    question: str, found: Candidates, forced: Route | None, model: ModelRoute | None
) -> EntryDecision:
    if model is None or forced is not None:
        return decide_entry(question, found.cards, forced)
    chosen = model_choice(model, question, found.cards)
    if isinstance(chosen, EntryDecision):
        return chosen
    ruled = decide_entry(question, found.cards)
    return replace(
        ruled, reason=f"the model's choice was refused: {chosen}; by the rules: {ruled.reason}"
    )


def entry_record(asked: Asked, question: str) -> dict[str, str]:
    """Entry's decision as the research run's `admitted` event records it (`WarrantContext`)."""
    return {
        "question": question,
        "route": "research",
        "reason": asked.decision.reason,
        "by": asked.actor,
    }


def record_direct(db: str, asked: Asked, question: str, at: float) -> dict[str, Any]:
    """The `entered` event of a direct answer, in the store's Entry ledger."""
    assert asked.answer is not None
    event = {
        "type": EventKind.ENTERED.value,
        "time": at,
        "actor": asked.actor,
        "payload": {
            "question": question,
            "route": asked.decision.route,
            "reason": asked.decision.reason,
            "read": list(asked.answer.read),
            "unopened": list(asked.answer.unopened),
            "quotes": [asdict(quote) for quote in asked.answer.quotes],
        },
    }
    with reading_graph(db) as graph:
        _put(store_of(graph), asked.entry, event)
    return event


def _put(store: BaseStore, entry: str, event: dict[str, Any]) -> None:
    store.put((*ENTRIES, entry), position(1), json.loads(json.dumps(event)), index=False)
