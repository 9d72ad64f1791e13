"""The run record's layout in LangGraph's store: namespaces, keys, the cursor, and batched reads.

A checkpoint holds only the run's `cursor` (how many events, receipts and model calls are
committed, and the digest of the last event), so a step costs the same at step 1,000 as at step 1.
Items are keyed by position (`events/0000000042`, `evidence/E7`): a node that runs again after a
crash writes the same keys again, and readers stop at the committed cursor, so whatever a crashed
step wrote beyond it is never read. Bodies (excerpt lines, model requests) are keyed by their
sha256 and checked against it when read (`ledger.bodies`); every other item carries its seal
(`ledger.integrity`). Writing is `ledger.commit`, reading `ledger.read`.

The store is LangGraph's own `BaseStore`: `SqliteStore`/`PostgresStore` embedded, the server's
store when served (`langgraph.json`). Namespaces: `("warrant", "bodies")` and
`("warrant", "runs", <lane>, <kind>)`, where the lane is the thread id (hashed when it holds a
character a namespace label may not).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item

from guards.budget import BudgetLeft, budget_left

ROOT = "warrant"
BODIES = (ROOT, "bodies")
EVENTS, EVIDENCE, MODEL_CALLS, CALLS, SIGNATURES, INTENTS, HANDOFFS, RECALLED = (
    "events",
    "evidence",
    "model_calls",
    "calls",
    "signatures",
    "intents",
    "handoffs",
    "notes",
)
CONTROL = "control"
"""Where people's stop requests and corrections to a run wait (`nodes.control`)."""
EVENT_FIELDS_ADDED = frozenset({"seq", "prev"})
"""Fields the commit adds to an event after its author sealed it."""
CURSOR = "cursor"
ARRIVALS = "arrivals"
EMPTY_CURSOR: dict[str, Any] = {
    "events": 0,
    "head": None,
    "turn": 0,
    "observations": 0,
    "answers": 0,
    "model_calls": 0,
    "handoffs": 0,
    "child_turns": 0,
    "child_questions": 0,
    "child_model_calls": 0,
    "notes": 0,
    "local_read": [],
}
"""`handoffs`: children handed off; `child_*`: what they spent, which counts against this run's
budget (`nodes.handoff`); `notes`: notes recalled from memory (M refs, `nodes.recall`);
`local_read`: the local sources of all the run was shown (`guards.provenance`), which the
chooser's own words carry from then on."""
_PLAIN_LABEL = re.compile(r"[A-Za-z0-9_:@+=-]{1,200}")


class RecordMissing(RuntimeError):
    """The store lacks an item the run's cursor says was committed (a store not the run's own)."""


def namespace_label(thread: str) -> str:
    """The namespace label of a thread's items: the id itself, or `~` and its sha256."""
    if _PLAIN_LABEL.fullmatch(thread):
        return thread
    return "~" + hashlib.sha256(thread.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def space(thread: str, kind: str) -> tuple[str, ...]:
    return (ROOT, "runs", namespace_label(thread), kind)


def position(number: int) -> str:
    """The key of the n-th item of a list kind; zero-padded so keys sort as numbers."""
    return f"{number:010d}"


def cursor_of(state: Mapping[str, Any]) -> dict[str, Any]:
    return {**EMPTY_CURSOR, **(state.get(CURSOR) or {})}


def left_at(state: Mapping[str, Any], turn: int, now: float) -> BudgetLeft:
    """The run's budget left at choice `turn`, as the guard will count it."""
    budget, cursor = state["grant"]["budget"], cursor_of(state)
    return budget_left(
        steps=budget["steps"],
        evidence=budget["evidence"],
        turn=turn + cursor["child_turns"],
        observations=cursor["observations"],
        deadline_at=state["deadline_at"],
        now=now,
    )


def got(store: BaseStore, ops: list[GetOp]) -> list[Item | None]:
    """The items `ops` read, in one batch (a `GetOp`'s result is an item or none)."""
    return [result if isinstance(result, Item) else None for result in store.batch(ops)]


def values_at(store: BaseStore, scope: str, kind: str, keys: list[str]) -> list[Any]:
    """The values under `keys` of a run's `kind`, in one batch (`None` where none is)."""
    found = got(store, [GetOp(space(scope, kind), key) for key in keys])
    return [item.value if item is not None else None for item in found]


def text_key(text: str) -> str:
    """A store key for chooser-given text (a call id, a call's signature): its sha256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
