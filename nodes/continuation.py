"""Continue: a new run linked to a finished one (its parent), with a fresh budget from the manifest.

The new run starts from what its parent established, without running anything again: the parent's
receipts, read from the store and kept only where the parent's seal holds, are carried in as the
new run's first evidence (same refs, `carried_from` naming the parent's), and the answers people
saved for questions the parent left open (late answers) follow as `H…`. The parent must have
ended (its ledger's last event is its handover), run the same scenario (the manifest's sha256 as
admitted: a receipt never crosses grants) and, on a server, been started by the same caller. Its report goes on: the new run's handover is the
next revision of the same report (`report`, `revision`).
"""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore

from contract.codes import ANSWER, OBSERVATION, EventKind
from contract.shapes import Interaction
from guards.human import check_reply
from guards.refusals import Refusal
from ledger.bodies import with_body_ref
from ledger.read import sealed_or_not
from ledger.record import RunRecord
from ledger.store import EVENTS, EVIDENCE, position
from nodes.evidence import answer_item
from nodes.questions import REPLIES

_BATCH = 64
REVISIONS = "revisions"
"""A report's index: revision number → the thread whose handover it is (revision 1: the report's
own thread)."""


class NotContinuable(ValueError):
    """The parent named is not a finished run in this store."""


def carried(
    store: BaseStore, parent: str, manifest_sha256: str, caller: str | None = None
) -> dict[str, Any]:
    """What a continuation of `parent` starts with: `evidence` (the parent's receipts, then its
    late answers, numbered for the new run), `report` and `revision` (the parent's plus one).
    `manifest_sha256`: the new run's manifest as admitted; `caller`: the served identity asking."""
    ledger = _probed(store, parent, EVENTS, position)
    if not ledger or ledger[-1].get("type") != EventKind.HANDOVER:
        raise NotContinuable(f"thread {parent!r} has no finished run to continue")
    _check_pinned(parent, ledger[0].get("payload") or {}, manifest_sha256, caller)
    ended = ledger[-1]["payload"]
    receipts = [_carried(item, parent) for item in _receipts(store, parent)]
    answered = {item["call_id"] for item in receipts if item["ref"].startswith(ANSWER)}
    asked: dict[str, Interaction] = {  # as the ledger recorded them
        event["payload"]["interaction"]["interaction_id"]: event["payload"]["interaction"]
        for event in ledger
        if event.get("type") == EventKind.ASKED
    }
    late = [
        _late(question, reply, f"{ANSWER}{len(answered) + n}", parent)
        for n, (question, reply) in enumerate(_late_answers(store, parent, asked, answered), 1)
    ]
    return {
        "evidence": receipts + late,
        "report": ended.get("report") or parent,
        "revision": int(ended.get("revision") or 1) + 1,
    }


def _check_pinned(
    parent: str, admitted: dict[str, Any], manifest_sha256: str, caller: str | None
) -> None:
    """A continuation runs its parent's scenario as admitted, for the caller who started it."""
    if admitted.get("manifest_sha256") != manifest_sha256:
        raise NotContinuable(
            f"thread {parent!r} ran scenario {admitted.get('scenario')!r} from another manifest "
            f"(sha256 {str(admitted.get('manifest_sha256') or 'not recorded')[:16]}, this run's "
            f"{manifest_sha256[:16]}): a continuation runs its parent's scenario, unchanged"
        )
    if caller is not None and admitted.get("started_by") != caller:
        raise NotContinuable(
            f"thread {parent!r} was not started by {caller!r}: only its own runs can be continued"
        )


def _receipts(store: BaseStore, parent: str) -> list[dict[str, Any]]:
    """The parent's receipts, E refs then H refs, where the parent's seal holds."""
    found: list[dict[str, Any]] = []
    for prefix in (OBSERVATION, ANSWER):
        items = _probed(store, parent, EVIDENCE, lambda n, p=prefix: f"{p}{n}")
        found += sealed_or_not(items, parent, EVIDENCE)[0]
    return found


def _late(question: Interaction, reply: dict[str, Any], ref: str, parent: str) -> dict[str, Any]:
    return with_body_ref(answer_item(question, reply, ref)) | {"late_for": parent}


def _carried(item: dict[str, Any], parent: str) -> dict[str, Any]:
    kept = {key: value for key, value in item.items() if key != "seal"}
    return kept | {"carried_from": {"thread": parent, "ref": item["ref"]}}


def _late_answers(
    store: BaseStore, parent: str, asked: dict[str, Interaction], adopted: set[str]
) -> list[tuple[Interaction, dict[str, Any]]]:
    """Replies saved for questions the parent's ledger shows it asked without waiting and never
    adopted, each checked against that question (a saved reply is data), oldest first."""
    found = []
    for item in RunRecord(store, parent).listed(REPLIES, limit=100):
        question = asked.get(item.key)
        if question is None or item.key in adopted:
            continue
        reply = check_reply(question, item.value.get("reply"))
        if not isinstance(reply, Refusal):
            found.append((item.value.get("saved_at", 0), question, reply))
    return [(question, reply) for _, question, reply in sorted(found, key=lambda each: each[0])]


def _probed(store: BaseStore, scope: str, kind: str, key: Any) -> list[dict[str, Any]]:
    """The items `key(1)`, `key(2)`, … of a finished run, until the first missing."""
    record = RunRecord(store, scope)
    found: list[dict[str, Any]] = []
    while True:
        batch = record.values(
            [(kind, key(n)) for n in range(len(found) + 1, len(found) + _BATCH + 1)]
        )
        for value in batch:
            if value is None:
                return found
            found.append(value)


def publish_revision(store: BaseStore, report: str, revision: int, thread: str) -> None:
    """Revision `revision` of `report` is `thread`'s handover (written again, alike, on a re-run)."""
    RunRecord(store, report).put(REVISIONS, str(revision), {"thread": thread})


def revision_thread(store: BaseStore, report: str, revision: int) -> str | None:
    """The thread whose handover is revision `revision` of `report`; None if there is none."""
    if revision == 1:
        return report
    found = RunRecord(store, report).value(REVISIONS, str(revision))
    thread = found.get("thread") if found is not None else None
    return thread if isinstance(thread, str) else None
