"""Remember: a note the chooser proposed is saved to the team's memory only as a person decided it.

The guard made the proposal an interaction (`remember`, shaped as a call so every inbox shows it);
here the decision is carried out: approved or edited, the note is saved under an id derived from
the interaction (a step that runs again writes the same note, never a second one); rejected or
expired, nothing is saved and the refusal says why. Either way the chooser takes the next turn.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.store.base import BaseStore

from contract.codes import EventKind, Outcome, Owner
from contract.state import WarrantState
from guards.human import NoteEdit
from guards.provenance import words_provenance
from guards.refusals import Refusal, RefusalCode
from ledger.context import event
from ledger.store import cursor_of
from nodes import memory
from nodes.human import PERSON, person_of
from nodes.recall import scope_of


def remembered(
    store: BaseStore,
    state: WarrantState,
    interaction: dict[str, Any],
    reply: dict[str, Any],
    at: float,
) -> dict[str, Any]:
    """The update for a person's decision on a proposed note: saved, or refused."""
    turn = state["turn"]
    decided = {
        "decision": {"turn": turn, "outcome": Outcome.ANSWERED.value, "calls": [], "status": None}
    }
    where = scope_of(state["grant"])
    if where is None:  # the guard proposes no note without memory; nothing to save into
        return decided | _refused(
            Refusal(
                RefusalCode.UNKNOWN_TOOL, Owner.HUMAN, "not saved: this run has no memory project"
            ),
            turn,
            at,
        )
    if (refusal := _not_saved(reply)) is not None:
        return decided | _refused(refusal, turn, at)
    proposed = interaction["call"]["args"]
    note = NoteEdit.model_validate(
        reply.get("args") or {"text": proposed["text"], "signature": proposed["signature"]}
    )
    by = reply.get("by") or PERSON
    note_id = memory.note_id_for(interaction["interaction_id"])
    existing = store.get(where.notes(), note_id)  # saved before a crash: never written again
    # The note is the chooser's words: as local as anything the run was shown (an MCP result,
    # a recalled local note included); the person approving it does not make it shareable.
    share: Literal["any", "local"] = words_provenance(cursor_of(state)["local_read"]).share
    saved = (
        existing.value
        if existing is not None
        else memory.save(
            store, where, note.text, by, at, note.signature, note_id=note_id, share=share
        )
    )
    receipt = {
        "interaction_id": interaction["interaction_id"],
        "note": note_id,
        "version": saved["version"],
        "project": where.project,
        "sha256": saved["sha256"],
        "by": by,
        "edited": "args" in reply,
        "refs": proposed.get("refs", []),
    }
    return decided | {
        "remembered": [*state.get("remembered", ()), receipt],
        "events": [event(EventKind.REMEMBERED, turn, person_of(reply), at, **receipt)],
    }


def _refused(refusal: Refusal, turn: int, at: float) -> dict[str, Any]:
    recorded = refusal.to_dict()
    return {
        "refusals": [{"turn": turn, **recorded}],
        "events": [event(EventKind.REFUSED, turn, PERSON, at, **recorded)],
    }


def _not_saved(reply: dict[str, Any]) -> Refusal | None:
    if reply.get("expired"):
        return Refusal(
            RefusalCode.INTERACTION_EXPIRED,
            Owner.HUMAN,
            "not saved: nobody decided the note within its reply time",
        )
    if reply.get("decision") == "reject":
        return Refusal(
            RefusalCode.REJECTED, Owner.HUMAN, "a person rejected the note; nothing was saved"
        )
    return None
