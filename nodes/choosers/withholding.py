"""What a model request quotes of a run, and what it holds back.

An evidence item is quoted as data between markers, or replaced by a hash-checked reference: for
the context budget, or because the route may not see it. Data approval holds for every byte:
nothing derived from a record marked `share = "local"` (or not marked shareable at all: a record
outside the grant) reaches a `remote` route — not an excerpt, a summary or its flags, an unknown
quoting a summary, a child's words, a note saved from such a run, or the detail of a refusal of a
call naming the record. The model still gets the evidence ref, the tool and the record id (to cite
and to plan). What the builders let through, the egress gate still checks (`taint`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Set as AbstractSet
from typing import Any

from guards.egress import Taint, item_texts, local_sources
from guards.provenance import may_leave, note_provenance
from nodes.choosers.route import Route
from nodes.choosers.view import ChooserView
from nodes.evidence import about_ref, quoting


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def taint(
    view: ChooserView,
    evidence: list[EvidenceBlock],
    local: frozenset[str],
    shared: list[str],
) -> Taint:
    """What this request must not carry to a remote route: the text of every item read from a
    local record, and of refused calls naming one; minus what may be shared anyway (the
    request's mandatory part, shareable items)."""
    local_notes = any(note_provenance(note).local for note in view.notes)
    if not local and not local_notes and all(not block.local for block in evidence):
        return Taint(frozenset())
    held = [text for block in evidence if block.local for text in item_texts(block.item)]
    held += [
        str(refusal.get("detail", ""))
        for refusal in view.refusals
        if records_named(refusal.get("call"), local)
    ]
    held += [
        f"{note.get('text', '')} {note.get('signature', '')}"
        for note in view.notes
        if note_provenance(note).local
    ]
    shared = [
        *shared,
        *(text for block in evidence if not block.local for text in item_texts(block.item)),
    ]
    return Taint.of(held, shared)


def note_for_route(note: dict[str, Any], route: Route) -> dict[str, Any]:
    """A note derived from local records, by reference only for a remote route: no text, no
    signature, no digest of them (an oracle for the text)."""
    if may_leave(note_provenance(note), route.locality) or "text" not in note:
        return note
    kept = {key: value for key, value in note.items() if key not in ("text", "signature", "sha256")}
    return kept | {"omitted": "derived from records approved for local routes only"}


def local_reads(evidence: list[EvidenceBlock]) -> frozenset[str]:
    """The refs of the items the route may not see the content of."""
    return frozenset(block.ref for block in evidence if block.local)


def unknowns_shown(
    view: ChooserView, evidence: list[EvidenceBlock], held: list[dict[str, Any]]
) -> list[str]:
    """The unknowns, those quoting an item's summary as the model may see it: a note for a
    withheld item, the narrowed summary for one a post-call hook narrowed."""
    replaced: dict[str, tuple[str, str]] = {}
    for block in evidence:
        shown = block.item.get("shown") or {}
        if block.local or shown.get("withheld"):
            why = LOCAL_ONLY if block.local else "a post-call hook's projection was refused"
            note = f"{block.ref}: withheld here ({why})."
            replaced |= {text: (block.ref, note) for text in quoting(block.item)}
        elif "summary" in shown:
            narrowed = quoting({**block.item, "summary": shown["summary"]})
            replaced |= {
                text: (block.ref, new)
                for text, new in zip(quoting(block.item), narrowed, strict=True)
            }
    local_refs = [block.ref for block in evidence if block.local]
    kept = []
    for unknown in view.unknowns:
        ref, text = replaced.get(unknown, (None, unknown))
        if ref is None and (
            about := about_ref(unknown, local_refs)
        ):  # deny by default: any word on it
            ref, text = about, f"{about}: withheld here ({LOCAL_ONLY})."
        kept.append(text)
        if ref is not None and text != unknown:
            held.append({"unknown_of": ref, "sha256": digest(unknown), "chars": len(unknown)})
    return kept


def refusals_shown(
    view: ChooserView, local: AbstractSet[str], held: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The refusals, the detail of one whose call names a local record withheld (a tool's error
    on that record may quote it)."""
    shown = []
    for refusal in view.refusals:
        named = records_named(refusal.get("call"), local)
        if not named:
            shown.append(refusal)
            continue
        detail = str(refusal.get("detail", ""))
        shown.append(
            {**refusal, "detail": f"withheld here: the call names {named[0]} ({LOCAL_ONLY})"}
        )
        held.append(
            {"refusal_turn": refusal.get("turn"), "sha256": digest(detail), "chars": len(detail)}
        )
    return shown


def records_named(call: Any, local: AbstractSet[str]) -> list[str]:
    """The local record ids a proposed call's arguments name (any string among its values)."""
    if not local or not isinstance(call, dict) or not isinstance(call.get("args"), dict):
        return []
    return sorted(
        {value for value in call["args"].values() if isinstance(value, str) and value in local}
    )


LOCAL_ONLY = "its record is approved for local routes only, share = local"


class EvidenceBlock:
    """One evidence item as quoted data, or as a reference when withheld or compacted."""

    def __init__(self, item: dict[str, Any], body: str, local: str | None) -> None:
        self.ref = item["ref"]
        self.local = local
        """The local record this item was read from, if the route may not see it."""
        self.turn = item.get("turn", 0)
        self.item = item
        self.body = body
        self.size = len(body)
        self.omission: dict[str, Any] | None = None
        self.text = ""
        if local:
            self.replace_by_reference(
                f"record {local} is approved for local routes only (share = local)"
            )
        else:
            self.text = body

    @property
    def quoted(self) -> bool:
        return self.omission is None

    @classmethod
    def of(cls, item: dict[str, Any], shareable: dict[str, Any], route: Route) -> EvidenceBlock:
        """`shareable`: the records a remote route may see (for a local route, all of them)."""
        named = local_sources(item, shareable) if route.locality == "remote" else []
        block = cls(item, quote(item), named[0] if named else None)
        withheld = (item.get("shown") or {}).get("withheld")
        if withheld and block.quoted:
            block.replace_by_reference(f"a post-call hook's projection was refused: {withheld}")
        return block

    def replace_by_reference(self, reason: str) -> None:
        """The body out; the summary stays unless the record is local (then only what the model
        chose itself: the tool and the record id)."""
        self.omission = {
            "ref": self.ref,
            "reason": reason,
            "sha256": digest(self.body),
            "chars": self.size,
        }
        shown = self.item.get("shown") or {}
        hidden = self.local or "withheld" in shown
        about = "" if hidden else f" — {shown.get('summary', self.item['summary'])}"
        what = "Body, summary and flags" if hidden else "Body"
        # A local body's digest is an oracle for what the route cannot see (a chooser that
        # controls the rest of the body recovers the unknown part offline): the ref alone, kept
        # in the run's record, is its handle.
        proof = (
            "kept in this run's record" if self.local else f"sha256 {self.omission['sha256'][:16]}"
        )
        self.text = (
            f"[{self.ref}: {self.item['tool']} on {self.item.get('record') or 'a person'}{about}. "
            f"{what} not included ({reason}); {proof}. You may cite {self.ref}.]"
        )


def quote(item: dict[str, Any]) -> str:
    """The item as data between markers: what its post-call hooks left of it, if they narrowed it."""
    flags = ",".join(item.get("flags", [])) or "none"
    shown = item.get("shown") or {}
    narrowed = f" narrowed_by={','.join(shown['by'])}" if "excerpt" in shown else ""
    header = f"<<<EVIDENCE {item['ref']} tool={item['tool']} record={item.get('record')} sha256={item.get('sha256')} flags={flags}{narrowed}>>>"
    excerpt = shown["excerpt"] if "excerpt" in shown else item.get("excerpt", [])
    summary = shown["summary"] if "excerpt" in shown else item["summary"]
    lines = [f"L{line['line']}: {defang(line['text'])}" for line in excerpt]
    return "\n".join(
        [
            header,
            f"summary: {defang(summary)}",
            *lines,
            f"<<<END EVIDENCE {item['ref']}>>>",
        ]
    )


def defang(text: str) -> str:
    """Quoted text cannot close or open a marker."""
    return text.replace("<<<", "‹‹‹").replace(">>>", "›››")
