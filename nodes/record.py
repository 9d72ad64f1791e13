"""The run record in LangGraph's store: each run's ledger, receipts and model calls, appended as
items, and the bodies they refer to, written once by content.

A checkpoint holds only the run's `cursor` (how many events, receipts and model calls are
committed, and the digest of the last event), so a step costs the same at step 1,000 as at step 1.
Items are keyed by position (`events/0000000042`, `evidence/E7`): a node that runs again after a
crash writes the same keys again, and readers stop at the committed cursor, so whatever a crashed
step wrote beyond it is never read. Bodies (excerpt lines, model requests) are keyed by their
sha256 and checked against it when read; every other item carries its seal (`nodes.integrity`).

Parallel tasks (one `execute` per call, one `human` per interaction) cannot number the ledger:
they leave `arrivals` in the state, and the next node commits them in a fixed order.

The store is LangGraph's own `BaseStore`: `SqliteStore`/`PostgresStore` embedded, the server's
store when served (`langgraph.json`). Namespaces: `("warrant", "bodies")` and
`("warrant", "runs", <lane>, <kind>)`, where the lane is the thread id (hashed when it holds a
character a namespace label may not).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from contract.codes import ANSWER, OBSERVATION, RECOLLECTION
from guards.budget import BudgetLeft, budget_left
from guards.checks import call_signature
from guards.provenance import read_locally
from guards.seal import SEAL, canonical, sealed_item
from nodes.handoff import received
from nodes.integrity import item_intact, label
from nodes.members import with_members
from nodes.memory import shown_notes

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
_PLAIN_LANE = re.compile(r"[A-Za-z0-9_:@+=-]{1,200}")
BODY_FIELDS = frozenset({"excerpt", "body_missing", "triage", "triage_missing"})  # read back


class RecordMissing(RuntimeError):
    """The store lacks an item the run's cursor says was committed (a store not the run's own)."""


def lane(thread: str) -> str:
    """The namespace label of a thread's items: the id itself, or `~` and its sha256."""
    if _PLAIN_LANE.fullmatch(thread):
        return thread
    return "~" + hashlib.sha256(thread.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def space(thread: str, kind: str) -> tuple[str, ...]:
    return (ROOT, "runs", lane(thread), kind)


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


# Bodies: written once by content.


def body_digest(body: Any) -> str:
    return hashlib.sha256(_body_bytes(body)).hexdigest()


def _body_bytes(body: Any) -> bytes:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def put_body(store: BaseStore, body: Any) -> str:
    """Store `body` under its sha256 (again, harmlessly, if it is there) and return the digest."""
    digest = body_digest(body)
    store.put(BODIES, digest, {"body": body}, index=False)
    return digest


def got(store: BaseStore, ops: list[GetOp]) -> list[Item | None]:
    """The items `ops` read, in one batch (a `GetOp`'s result is an item or none)."""
    return [result if isinstance(result, Item) else None for result in store.batch(ops)]


def bodies(store: BaseStore, digests: Iterable[str | None]) -> dict[str, Any]:
    """The bodies found for `digests` whose content still has that digest."""
    wanted = sorted({digest for digest in digests if digest})
    found = got(store, [GetOp(BODIES, digest) for digest in wanted])
    return {
        digest: item.value["body"]
        for digest, item in zip(wanted, found, strict=True)
        if item is not None and body_digest(item.value.get("body")) == digest
    }


def with_body_ref(item: Mapping[str, Any]) -> dict[str, Any]:
    """A receipt with the digest and count of its excerpt lines beside them. `commit` writes the
    lines once as a body, in the batch that records the receipt, and stores the receipt without
    them: a receipt and its body are in the store together or not at all."""
    lines = item.get("excerpt") or []
    return {**item, "body": body_digest(lines) if lines else None, "lines": len(lines)}


# Committing: the events, receipts and model calls of one step, at the cursor.


def commit(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], written: Mapping[str, list[Any]]
) -> dict[str, Any]:
    """Write `written` (`events`, `evidence`, `recalled`, `model_calls`, `handoffs` of one step, in order) after the
    cursor in one batch, and return the cursor past them. Every item is sealed for this run;
    events are numbered and chained here."""
    after = {**EMPTY_CURSOR, **cursor}
    ops: list[PutOp] = []
    for item in written.get(EVIDENCE, ()):
        ops += _receipt_ops(scope, item)
        count = "observations" if item["ref"].startswith(OBSERVATION) else "answers"
        after[count] = max(after[count], int(item["ref"][1:]))
    for item in written.get(RECALLED, ()):
        after["notes"] = max(after["notes"], int(item["ref"][1:]))
        ops.append(
            PutOp(
                space(scope, RECALLED),
                item["ref"],
                sealed_item(label(scope, RECALLED), item),
                index=False,
            )
        )
    for call in written.get(MODEL_CALLS, ()):
        after["model_calls"] += 1
        sealed = sealed_item(label(scope, MODEL_CALLS), call)
        ops.append(
            PutOp(space(scope, MODEL_CALLS), position(after["model_calls"]), sealed, index=False)
        )
    for document in written.get(HANDOFFS, ()):
        after["handoffs"] += 1
        for spent in ("steps", "questions", "model_calls"):
            after[f"child_{'turns' if spent == 'steps' else spent}"] += document["spent"][spent]
        sealed = sealed_item(label(scope, HANDOFFS), document)
        ops.append(PutOp(space(scope, HANDOFFS), position(after["handoffs"]), sealed, index=False))
    known = _known_after(scope, cursor)
    for event in written.get(EVENTS, ()):
        numbered = {
            **sealed_item(label(scope, EVENTS), event),
            "seq": after["events"] + 1,
            "prev": after["head"],
        }
        after["events"] += 1
        after["head"] = event_digest(numbered)
        after["turn"] = max(after["turn"], event.get("turn", 0))
        ops.append(PutOp(space(scope, EVENTS), position(after["events"]), numbered, index=False))
    after["local_read"] = read_locally(
        after["local_read"], written.get(EVIDENCE, ()), written.get(RECALLED, ())
    )
    if ops:
        store.batch(ops)
    if known is not None:
        _learn(scope, known, written.get(EVIDENCE, ()), after)
    return after


def _receipt_ops(scope: str, item: dict[str, Any]) -> list[PutOp]:
    lines = item.get("excerpt")
    stored = {key: value for key, value in item.items() if key != "excerpt"}
    sealed = sealed_item(label(scope, EVIDENCE), stored)
    ops = [PutOp(space(scope, EVIDENCE), item["ref"], sealed, index=False)]
    if lines and stored.get("body") == body_digest(lines):
        ops.append(PutOp(BODIES, stored["body"], {"body": lines}, index=False))
    if item.get("kind", "observation") == "observation":
        signature = call_signature(item["tool"], item["args"])
        index = {"ref": item["ref"], "signature": signature}
        ops.append(
            PutOp(
                space(scope, CALLS),
                text_key(item["call_id"]),
                sealed_item(label(scope, CALLS), index),
                index=False,
            )
        )
        ops.append(
            PutOp(
                space(scope, SIGNATURES),
                text_key(signature),
                sealed_item(label(scope, SIGNATURES), index),
                index=False,
            )
        )
    return ops


def text_key(text: str) -> str:
    """A store key for chooser-given text (a call id, a call's signature): its sha256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def event_digest(event: Mapping[str, Any]) -> str:
    """The sha256 of an event as stored (its seq, seal and the digest before it included)."""
    return hashlib.sha256(canonical(dict(event))).hexdigest()


def arrivals_in_order(arrivals: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """What parallel tasks left, in the order the ledger records it: receipts by ref, and the
    events of the tasks in the order the tasks were given."""
    receipts = sorted(
        (item["evidence"] for item in arrivals if "evidence" in item),
        key=lambda item: int(item["ref"][1:]),
    )
    order = {item["ref"]: index for index, item in enumerate(receipts)}
    events = [item["event"] for item in arrivals if "event" in item]
    events.sort(
        key=lambda event: (
            order.get(event["payload"].get("ref"), -1),
            event["payload"].get("order", -1),
        )
    )
    handoffs = [item["handoff"] for item in arrivals if "handoff" in item]
    return {EVIDENCE: receipts, EVENTS: events, HANDOFFS: handoffs}


# Reading: never past the committed cursor.


def _items(store: BaseStore, scope: str, kind: str, keys: list[str]) -> list[Any]:
    found = got(store, [GetOp(space(scope, kind), key) for key in keys])
    return [item.value if item is not None else None for item in found]


def events(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], first: int = 1
) -> list[dict[str, Any]]:
    """The ledger from event `first` to the cursor, as stored (a missing event raises)."""
    count = cursor_of({CURSOR: cursor})["events"]
    found = _items(store, scope, EVENTS, [position(n) for n in range(first, count + 1)])
    if any(event is None for event in found):
        raise RecordMissing(f"the store lacks events of run {scope!r} that its state records")
    return found


def event_at(store: BaseStore, scope: str, number: int) -> dict[str, Any] | None:
    return _items(store, scope, EVENTS, [position(number)])[0] if number > 0 else None


def evidence(store: BaseStore, scope: str, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every committed receipt (E refs, then H refs), its excerpt read back from its body."""
    counted = cursor_of({CURSOR: cursor})
    refs = [f"{OBSERVATION}{n}" for n in range(1, counted["observations"] + 1)]
    refs += [f"{ANSWER}{n}" for n in range(1, counted["answers"] + 1)]
    items = [item for item in _items(store, scope, EVIDENCE, refs) if item is not None]
    found = bodies(store, (item.get("body") for item in items))
    return [with_excerpt(item, found) for item in items]


def with_excerpt(item: dict[str, Any], found: Mapping[str, Any]) -> dict[str, Any]:
    """A receipt with its excerpt lines; a body gone or changed is said, never invented."""
    digest = item.get("body")
    if digest is None:
        return {**item, "excerpt": []}
    if digest not in found:
        return {**item, "excerpt": [], "body_missing": True}
    return {**item, "excerpt": found[digest]}


def recalled(store: BaseStore, scope: str, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The notes this run recalled (M1…), as recorded: ids, versions and digests, never text."""
    count = cursor_of({CURSOR: cursor})["notes"]
    found = _items(store, scope, RECALLED, [f"{RECOLLECTION}{n}" for n in range(1, count + 1)])
    return [item for item in found if item is not None]


def handoffs(store: BaseStore, scope: str, cursor: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The children's handoffs this run received, in order of receipt."""
    count = cursor_of({CURSOR: cursor})["handoffs"]
    found = _items(store, scope, HANDOFFS, [position(n) for n in range(1, count + 1)])
    return [document for document in found if document is not None]


def model_calls(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], last: int | None = None
) -> list[dict[str, Any]]:
    """The committed model calls, or the `last` few of them, oldest first."""
    count = cursor_of({CURSOR: cursor})["model_calls"]
    first = 1 if last is None else max(1, count - last + 1)
    found = _items(store, scope, MODEL_CALLS, [position(n) for n in range(first, count + 1)])
    return [call for call in found if call is not None]


def receipts_of_calls(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], call_ids: list[str]
) -> dict[str, str]:
    """Call id → signature, for those of `call_ids` that have a committed, sealed receipt."""
    return _indexed(store, scope, cursor, {CALLS: call_ids})[CALLS]


def executed_signatures(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], signatures: list[str]
) -> set[str]:
    return set(_indexed(store, scope, cursor, {SIGNATURES: signatures})[SIGNATURES])


def receipts_asked(
    store: BaseStore,
    scope: str,
    cursor: Mapping[str, Any],
    call_ids: list[str],
    signatures: list[str],
) -> tuple[dict[str, str], set[str]]:
    """`receipts_of_calls` and `executed_signatures` together, in one read."""
    found = _indexed(store, scope, cursor, {CALLS: call_ids, SIGNATURES: signatures})
    return found[CALLS], set(found[SIGNATURES])


def _indexed(
    store: BaseStore, scope: str, cursor: Mapping[str, Any], wanted: Mapping[str, list[str]]
) -> dict[str, dict[str, str]]:
    """For each kind (`calls`, `signatures`), text → signature of the committed, sealed index
    entries found for `wanted`: what this process committed up to the cursor's head
    (`KnownReceipts`), else one store batch for all."""
    known = _known_at(scope, cursor)
    if known is not None:
        return {
            kind: {text: known.index[kind][text] for text in texts if text in known.index[kind]}
            for kind, texts in wanted.items()
        }
    committed = cursor_of({CURSOR: cursor})["observations"]
    asked = [(kind, text) for kind, texts in wanted.items() for text in sorted(set(texts))]
    found = got(store, [GetOp(space(scope, kind), text_key(text)) for kind, text in asked])
    result: dict[str, dict[str, str]] = {kind: {} for kind in wanted}
    for (kind, text), item in zip(asked, found, strict=True):
        entry = item.value if item is not None else None
        if (
            entry is not None
            and item_intact(label(scope, kind), entry)
            and int(entry["ref"][1:]) <= committed
        ):
            result[kind][text] = entry["signature"]
    return result


# What this process committed: the guard asks at every proposal whether a call id or a call has
# a receipt, a store read each time. A process that committed a run's whole ledger from its first
# event knows the answer: the receipts committed up to a ledger head are those of the commits that
# led to it, and the head (a chained sha256 of every event, each sealed for the run) names the
# ledger. So the answer is taken from memory only when the cursor asked about has the head this
# process's last commit of the run left; a run resumed in another process, a state put back, a
# commit that failed after it was counted here: a different head, and the store is read.


@dataclass
class KnownReceipts:
    """The receipt index (`calls`: call id → signature; `signatures`: signature → signature) of
    a run's ledger up to `head`, as this process committed it."""

    head: str | None
    index: dict[str, dict[str, str]] = field(default_factory=lambda: {CALLS: {}, SIGNATURES: {}})


_KNOWN: OrderedDict[str, KnownReceipts] = OrderedDict()
_KNOWN_RUNS = 256
_KNOWN_LOCK = threading.Lock()


def _known_at(scope: str, cursor: Mapping[str, Any]) -> KnownReceipts | None:
    counted = cursor_of({CURSOR: cursor})
    with _KNOWN_LOCK:
        known = _KNOWN.get(scope)
        if known is None or counted["events"] == 0 or known.head != counted["head"]:
            return None
        _KNOWN.move_to_end(scope)
        return known


def _known_after(scope: str, cursor: Mapping[str, Any]) -> KnownReceipts | None:
    """The index a commit after `cursor` extends: a new ledger starts one; one this process
    did not follow is forgotten."""
    counted = cursor_of({CURSOR: cursor})
    if not any(counted[count] for count in ("events", "observations", "answers")):
        return KnownReceipts(head=None)
    known = _known_at(scope, counted)
    if known is None:
        with _KNOWN_LOCK:
            _KNOWN.pop(scope, None)
    return known


def _learn(
    scope: str,
    known: KnownReceipts,
    receipts: Iterable[Mapping[str, Any]],
    after: Mapping[str, Any],
) -> None:
    """`known` extended by a commit's receipts, at the head the commit left (a new object: a
    reader holding the one before keeps its answer)."""
    index = {kind: dict(entries) for kind, entries in known.index.items()}
    for item in receipts:
        if item.get("kind", "observation") == "observation":
            signature = call_signature(item["tool"], item["args"])
            index[CALLS][item["call_id"]] = signature
            index[SIGNATURES][signature] = signature
    with _KNOWN_LOCK:
        _KNOWN[scope] = KnownReceipts(head=after["head"], index=index)
        _KNOWN.move_to_end(scope)
        if len(_KNOWN) > _KNOWN_RUNS:
            _KNOWN.popitem(last=False)


def sealed_or_not(
    items: list[dict[str, Any]], scope: str, kind: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The items this run wrote, and those it did not."""
    ignore = EVENT_FIELDS_ADDED if kind == EVENTS else frozenset()
    body_fields = BODY_FIELDS if kind == EVIDENCE else frozenset()
    own: list[dict[str, Any]] = []
    foreign: list[dict[str, Any]] = []
    for item in items:
        intact = item_intact(label(scope, kind), item, ignore | body_fields)
        (own if intact else foreign).append(item)
    return own, foreign


def receipt_digest(item: Mapping[str, Any]) -> str:
    """The digest of a receipt as its `executed` event records it (without seal or excerpt)."""
    return body_digest({k: v for k, v in item.items() if k != SEAL and k not in BODY_FIELDS})


def without_seal(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in item.items() if key != SEAL} for item in items]


# The nodes' side: what a step writes goes to the store, and the state keeps the cursor.

RECORDED = (EVENTS, EVIDENCE, MODEL_CALLS, HANDOFFS, RECALLED)
"""What a node's update may carry that is committed to the store, not kept in the state."""


def committed(
    update: dict[str, Any],
    state: Mapping[str, Any],
    store: BaseStore,
    scope: str,
    write: bool = True,
) -> dict[str, Any]:
    """The update with its events, receipts and model calls committed after the state's cursor,
    and the cursor past them. `write=False`: the cursor is not the run's own, so nothing is
    written where it points (the update's refusals still record what was found)."""
    written = {kind: update[kind] for kind in RECORDED if update.get(kind)}
    rest = {name: value for name, value in update.items() if name not in RECORDED}
    if not written or not write:
        return rest
    return {**rest, CURSOR: commit(store, scope, cursor_of(state), written)}


def commit_arrivals(
    state: dict[str, Any], store: BaseStore, scope: str, skip: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state with the last step's arrivals committed (only those this run sealed; none when
    they were found out of step), and the update that clears them. The state as the governed
    wrapper (`graph.governed`) has it, before any of its values is trusted: a plain dict."""
    arrivals = state.get(ARRIVALS)
    if not arrivals:
        return state, {}
    if skip:  # left for the handover to find
        return state, {}
    own = [item for item in arrivals if item_intact(label(scope, ARRIVALS), item)]
    written = arrivals_in_order([{k: v for k, v in item.items() if k != SEAL} for item in own])
    if written[HANDOFFS]:  # children's receipts, numbered after the run's own
        receipts, written[HANDOFFS] = received(written[HANDOFFS], cursor_of(state))
        written[EVIDENCE] = [*written[EVIDENCE], *receipts]
    cursor = commit(store, scope, cursor_of(state), written)
    update = {ARRIVALS: None, CURSOR: cursor}
    return {**state, ARRIVALS: [], CURSOR: cursor}, update


def as_arrivals(update: dict[str, Any]) -> dict[str, Any]:
    """A task's update, its receipts and events left for the next node to commit."""
    arrivals = [{"evidence": item} for item in update.get(EVIDENCE, ())]
    arrivals += [{"event": event} for event in update.get(EVENTS, ())]
    arrivals += [{"handoff": handoff} for handoff in update.get(HANDOFFS, ())]
    rest = {name: value for name, value in update.items() if name not in RECORDED}
    return {**rest, ARRIVALS: arrivals} if arrivals else rest


def materialized(store: BaseStore, scope: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """A run's state with its record read back from the store up to its cursor, as readers show
    it (`events`, `evidence` with excerpts, `model_calls`, the notes it recalled, its own, as they
    may be shown now: `memory`; the grant's members); items the store lacks are left out."""
    cursor = cursor_of(values)
    notes = sealed_or_not(recalled(store, scope, cursor), scope, RECALLED)[0]
    return {
        **with_members(store, values),
        EVENTS: new_events(store, scope, 0, cursor),
        EVIDENCE: evidence(store, scope, cursor),
        MODEL_CALLS: model_calls(store, scope, cursor),
        **({"memory": shown_notes(store, without_seal(notes))} if notes else {}),
    }


def new_events(
    store: BaseStore, scope: str, before: int, cursor: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The events committed after event `before`, up to the cursor (for progress lines)."""
    count = cursor_of({CURSOR: cursor})["events"]
    found = _items(store, scope, EVENTS, [position(n) for n in range(before + 1, count + 1)])
    return [event for event in found if event is not None]
