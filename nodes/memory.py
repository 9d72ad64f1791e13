"""Memory as history: a team's notes (known failure signatures, where a bug is tracked) kept in
LangGraph's store, per project and optionally per user, each change a versioned receipt.

A note is the latest version at `("memory", project, user, note_id)`; every change is a receipt at
`("memory_versions", project, user, note_id)` keyed by its version: who, when, the operation and
the sha256 of the version it replaced. `forget` first writes the tombstone (one put: from then on
the note is forgotten for every reader), then erases the text of every version; a forget cut short
by a crash is finished by the next read of that note, and nothing can revive a tombstone: a later
save, correct or failed answer is refused. A note is history a model may be shown, marked as such,
never evidence (`recall`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.store.base import BaseStore, GetOp, PutOp

NOTES, VERSIONS = "memory", "memory_versions"
ANYONE = "_"
Share = Literal["any", "local"]
"""The user part of a project-wide note's namespace."""
MAX_NOTE_CHARS = 4000
NOTE_ID = re.compile(r"m-[0-9a-f]{8}")
NAME = re.compile(r"[\w.@+-]{1,100}")
PAGE = 5000
"""Items read per store search: a store pages by offset, so each page costs what it skips (with
100 a page, recall over 10,000 notes took 2 s, `bench/memory_recall.py`)."""


class NoteError(ValueError):
    """A note operation that cannot be done (a bad name, id or text, no such note, a forgotten
    one); the message says why, in one line. Not the builtin `MemoryError`, which it once shadowed."""


@dataclass(frozen=True)
class Scope:
    """Whose notes: a project's, and within it a user's (or everyone's, `ANYONE`)."""

    project: str
    user: str = ANYONE

    def __post_init__(self) -> None:
        for label, value in (("project", self.project), ("user", self.user)):
            if not NAME.fullmatch(value):
                raise NoteError(
                    f"{label} {value[:40]!r} is not a name (letters, digits, . @ + - _)"
                )

    def notes(self) -> tuple[str, ...]:
        return (NOTES, self.project, self.user)

    def versions(self, note_id: str) -> tuple[str, ...]:
        return (VERSIONS, self.project, self.user, note_id)


def save(
    store: BaseStore,
    scope: Scope,
    text: str,
    by: str,
    at: float,
    signature: str = "",
    note_id: str | None = None,
    share: Share = "any",
) -> dict[str, Any]:
    """A new note, version 1. `note_id`: derived by the caller when saving again must write the
    same note (a step that runs again after a crash); a fresh one otherwise. `share`: `local` for
    a note derived from records approved for local routes only (no remote route sees its text)."""
    note_id = note_id or f"m-{secrets.token_hex(4)}"
    return _write(
        store,
        scope,
        note_id,
        _checked(text),
        signature,
        by,
        at,
        version=1,
        op="save",
        previous=None,
        share=share,
    )


def correct(
    store: BaseStore, scope: Scope, note_id: str, text: str, by: str, at: float
) -> dict[str, Any]:
    """A new version of a note that is not forgotten."""
    note = _live(store, scope, note_id)
    return _write(
        store,
        scope,
        note_id,
        _checked(text),
        note["signature"],
        by,
        at,
        version=note["version"] + 1,
        op="correct",
        previous=note["sha256"],
        share=note.get("share", "any"),
    )


def forget(store: BaseStore, scope: Scope, note_id: str, by: str, at: float) -> dict[str, Any]:
    """The note forgotten for good: tombstone first, then every version's text erased."""
    note = _found(store, scope, note_id)
    if note["state"] == "forgotten":
        _erase_versions(store, scope, note_id)  # finish a forget a crash cut short
        return note
    tombstone = {
        "id": note_id,
        "state": "forgotten",
        "version": note["version"] + 1,
        "by": by,
        "at": at,
        "text": None,
        "signature": "",
        "sha256": None,
    }
    receipt = {
        "version": tombstone["version"],
        "op": "forget",
        "by": by,
        "at": at,
        "previous": note["sha256"],
        "text": None,
    }
    store.put(scope.notes(), note_id, tombstone, index=False)
    store.put(scope.versions(note_id), _key(tombstone["version"]), receipt, index=False)
    _erase_versions(store, scope, note_id)
    return tombstone


def notes(store: BaseStore, scope: Scope, include_forgotten: bool = False) -> list[dict[str, Any]]:
    """The scope's notes, oldest first; forgotten ones only when asked (and then without text)."""
    found = [item.value for item in _search_all(store, scope.notes())]
    kept = [note for note in found if include_forgotten or note["state"] == "active"]
    return sorted(kept, key=lambda note: (note["at"], note["id"]))


def history(store: BaseStore, scope: Scope, note_id: str) -> list[dict[str, Any]]:
    """A note's receipts, oldest first (a forgotten note's without their text)."""
    note = _found(store, scope, note_id)
    if note["state"] == "forgotten":
        _erase_versions(store, scope, note_id)
    return sorted(
        (item.value for item in _search_all(store, scope.versions(note_id))),
        key=lambda receipt: receipt["version"],
    )


def recall(
    store: BaseStore, scopes: Sequence[Scope], query: str, limit: int = 5
) -> list[dict[str, Any]]:
    """Active notes of `scopes` whose text or signature holds every word of `query`
    (case-insensitive), newest first, each with the `project` and `user` it is kept under; a
    forgotten note is never returned."""
    words = [word.lower() for word in re.findall(r"\w+", query)]
    if not words:
        return []
    active = [
        note | {"project": scope.project, "user": scope.user}
        for scope in scopes
        for note in notes(store, scope)
    ]
    matching = [
        note
        for note in active
        if all(word in f"{note['text']} {note['signature']}".lower() for word in words)
    ]
    return sorted(matching, key=lambda note: note["at"], reverse=True)[:limit]


FORGOTTEN = "forgotten since it was recalled: its text is no longer shown"


def shown_notes(store: BaseStore, recalled: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Notes a run recalled (its record keeps ids, versions and digests, never text), as they may
    be shown now: with their text and signature, or marked forgotten (the tombstone decides, even
    before the texts are erased). Each note and its recalled version, read in one batch."""
    if not recalled:
        return []
    scopes = [Scope(item["project"], item.get("user", ANYONE)) for item in recalled]
    found = store.batch(
        [
            op
            for scope, item in zip(scopes, recalled, strict=True)
            for op in (
                GetOp(scope.notes(), item["note"]),
                GetOp(scope.versions(item["note"]), _key(item["version"])),
            )
        ]
    )
    return [_shown(item, found[2 * n], found[2 * n + 1]) for n, item in enumerate(recalled)]


def _shown(item: dict[str, Any], note: Any, receipt: Any) -> dict[str, Any]:
    base = {key: item[key] for key in ("ref", "note", "version", "sha256", "query", "turn")}
    if (
        note is None
        or note.value["state"] == "forgotten"
        or receipt is None
        or receipt.value.get("text") is None
    ):
        return base | {"forgotten": FORGOTTEN}
    return base | {
        "text": receipt.value["text"],
        "signature": note.value["signature"],
        "by": receipt.value["by"],
        "at": receipt.value["at"],
        "share": note.value.get("share", "any"),
    }


def note_id_for(seed: str) -> str:
    """A note id derived from `seed` (an interaction id): the same seed, the same note."""
    return "m-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]


def _write(
    store: BaseStore,
    scope: Scope,
    note_id: str,
    text: str,
    signature: str,
    by: str,
    at: float,
    *,
    version: int,
    op: str,
    previous: str | None,
    share: Share,
) -> dict[str, Any]:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    note = {
        "id": note_id,
        "state": "active",
        "version": version,
        "text": text,
        "signature": signature,
        "by": by,
        "at": at,
        "sha256": digest,
        "share": share,
    }
    receipt = {
        "version": version,
        "op": op,
        "by": by,
        "at": at,
        "previous": previous,
        "text": text,
        "sha256": digest,
    }
    # The receipt first: a crash between the two leaves a receipt for a version not yet current,
    # never a current version without its receipt.
    store.put(scope.versions(note_id), _key(version), receipt, index=False)
    store.put(scope.notes(), note_id, note, index=False)
    return note


def _erase_versions(store: BaseStore, scope: Scope, note_id: str) -> None:
    spoken = [
        item
        for item in _search_all(store, scope.versions(note_id))
        if item.value.get("text") is not None
    ]
    if spoken:
        store.batch(
            [
                PutOp(
                    item.namespace,
                    item.key,
                    {**item.value, "text": None, "erased": True},
                    index=False,
                )
                for item in spoken
            ]
        )


def _found(store: BaseStore, scope: Scope, note_id: str) -> dict[str, Any]:
    if not NOTE_ID.fullmatch(note_id):
        raise NoteError(f"{note_id[:40]!r} is not a note id (m- and 8 hex digits)")
    item = store.get(scope.notes(), note_id)
    if item is None:
        raise NoteError(
            f"no note {note_id} in project {scope.project}"
            + (f" for {scope.user}" if scope.user != ANYONE else "")
        )
    return item.value


def _live(store: BaseStore, scope: Scope, note_id: str) -> dict[str, Any]:
    note = _found(store, scope, note_id)
    if note["state"] == "forgotten":
        raise NoteError(
            f"note {note_id} was forgotten (version {note['version']}); it cannot be changed again"
        )
    return note


def _checked(text: str) -> str:
    text = text.strip()
    if not text:
        raise NoteError("a note needs text")
    if len(text) > MAX_NOTE_CHARS:
        raise NoteError(f"a note holds at most {MAX_NOTE_CHARS} characters")
    if "\x00" in text:
        raise NoteError("a note cannot contain a NUL character")
    return text


def _key(version: int) -> str:
    return f"{version:08d}"  # keys sort as versions do


def _search_all(store: BaseStore, prefix: tuple[str, ...]) -> Sequence[Any]:
    found, offset = [], 0
    while page := store.search(prefix, limit=PAGE, offset=offset):
        found += [item for item in page if item.namespace == prefix]
        offset += len(page)
    return found
