"""A handover as a grader's route may see it: for a `remote` route, deny by default.

A local route sees the handover whole. A remote one sees it whole only when the run read nothing
local: no evidence item from a record not marked shareable (a child's and a carried receipt
included, `guards.egress.local_sources`), no recalled note not marked shareable. Once it did, what
its chooser, its children and the people it asked wrote may carry that content, in any words and
at any length, so only what Warrant wrote from the grant and the run's structure goes out: refs,
tools, record ids, digests, codes, statuses, counts, line numbers, the goal, and what shareable
records said. Every text a chooser, a child or a person wrote — hypotheses, stop text, ending
reasons, unknowns, refusal details, call arguments, questions and answers, tasks' goals, recall
queries — is replaced by a reference, and so is any field this module does not list: a field added
to the handover later is withheld until it is listed here. Each withheld field is counted, with its
sha256, for the request's record (`View.withheld`); the request then passes the egress gate, the
last check, which is given every withheld text too (`View.taint`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contract.codes import Status
from guards.action import is_citation
from guards.citations import base_ref
from guards.egress import Taint, item_texts, local_sources, sources_of
from guards.finalize import EndFacts, finalize
from guards.provenance import Locality
from nodes.evidence import quoting
from nodes.unknowns import unknowns_of
from tools.catalog import PROFILES

LOCAL_ONLY = "the run read records approved for local routes only (share = local)"
WITHHELD = "withheld here: derived from a record approved for local routes only (share = local)"
"""What stands for an evidence item read from a local record."""
CHOOSER_ENDED = "The chooser ended the investigation: "


def _written_by_status() -> frozenset[str]:
    """The unknowns and ending reasons Warrant writes from a status alone, whatever the run."""
    texts = set(unknowns_of({}, []))
    for status in Status:
        texts |= set(unknowns_of({"status": status.value}, []))
        for hard_end in (False, True):
            facts = EndFacts(status.value, "", None, False, hard_end, ())
            texts.add(finalize(facts).reasons[0])
    texts |= {
        finalize(EndFacts(None, "", None, tampered, False, ())).reasons[0]
        for tampered in (False, True)
    }
    return frozenset(texts)


WRITTEN_BY_STATUS = _written_by_status()


@dataclass(frozen=True)
class RunFacts:
    """What the grader must know of the graded run to keep its local content local."""

    records: Mapping[str, Mapping[str, Any]]
    """What the run's evidence may be read from, each with its `share` (`sources_of`)."""
    written: frozenset[str] = WRITTEN_BY_STATUS
    """Texts Warrant itself writes from the grant and a status: unknowns a remote grader may read."""

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunFacts:
        """From a run's state values (its `grant`)."""
        grant = values.get("grant") or {}
        return cls(sources_of(grant), WRITTEN_BY_STATUS | set(unknowns_of({"grant": grant}, [])))


@dataclass
class View:
    """The handover as shown to the route, what the gate must still catch, and what was withheld
    (each withheld field: where it was, its sha256 and length; never its text)."""

    shown: dict[str, Any]
    taint: Taint = field(default_factory=lambda: Taint(frozenset()))
    withheld: list[dict[str, Any]] = field(default_factory=list)


def for_route(handover: Mapping[str, Any], run: RunFacts, locality: Locality) -> View:
    """The handover as a route of `locality` may see it (module docstring)."""
    evidence = list(handover.get("evidence") or ())
    local = {item["ref"] for item in evidence if local_sources(item, run.records)}
    notes = [note for note in handover.get("memory") or () if note.get("share") != "any"]
    if locality != "remote" or not (local or notes):
        return View(dict(handover))
    return _Withholding(handover, run, local).view()


class _Withholding:
    """One remote view of a handover of a run that read local content."""

    def __init__(self, handover: Mapping[str, Any], run: RunFacts, local: set[str]) -> None:
        self.handover, self.run, self.local = handover, run, local
        self.evidence = list(handover.get("evidence") or ())
        self.refs = {str(item.get("ref")) for item in self.evidence}
        self.tools = CATALOG | {str(item.get("tool")) for item in self.evidence}
        self.held: list[str] = []
        self.withheld: list[dict[str, Any]] = []
        self.kept_unknowns = set(run.written) | {
            text for item in self.evidence if self._shareable(item) for text in quoting(item)
        }
        went_on = finalize(EndFacts(None, "", None, False, False, self.evidence)).reasons[1:]
        self.kept_reasons = WRITTEN_BY_STATUS | set(went_on)

    def view(self) -> View:
        shown: dict[str, Any] = {}
        for key, value in self.handover.items():
            if key in PLAIN or (key in SHOWN and not value):
                shown[key] = value
            elif key in SHOWN:
                shown[key] = getattr(self, SHOWN[key])(value, key)
            else:
                shown[key] = self.hold(key, value)
        shared = [str(self.handover.get("goal") or ""), *self.run.records, *self.run.written]
        shared += [
            text for item in self.evidence if self._shareable(item) for text in item_texts(item)
        ]
        return View(shown, Taint.of(self.held, shared), self.withheld)

    def hold(self, where: str, value: Any) -> str:
        """A reference in place of `value`, counted."""
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        self.held += _leaves(value)  # not the keys: the gate would withhold the view's own
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        self.withheld.append({"field": where, "sha256": digest, "chars": len(text)})
        return f"[withheld: {where}; {LOCAL_ONLY}]"

    def _shareable(self, item: Mapping[str, Any]) -> bool:
        """Read from shareable records only, and its summary quotes no word the chooser chose."""
        if item["ref"] in self.local or _person(item):
            return False
        summary = str(item.get("summary") or "")
        return not any(word in summary for word in _chooser_words(item, self.run))

    def evidence_items(self, items: list[Any], where: str) -> list[Any]:
        return [self._item(item, f"{where}[{n}]") for n, item in enumerate(items)]

    def _item(self, item: Mapping[str, Any], where: str) -> dict[str, Any]:
        kept = {key: item[key] for key in ITEM_REFERENCE if key in item}
        if item["ref"] in self.local or _person(item):
            self.held += item_texts(item)
            why = WITHHELD if item["ref"] in self.local else f"a person's words; {LOCAL_ONLY}"
            self.hold(where, {key: item.get(key) for key in ("args", "summary", "excerpt")})
            return kept | {"withheld": why}
        for key, value in item.items():
            if key in ITEM_PLAIN:
                kept[key] = value
            elif key not in ITEM_REFERENCE and key != "args":
                kept[key] = self.hold(f"{where}.{key}", value)
        kept["args"] = {
            name: value
            if _structural(value, self.run)
            else self.hold(f"{where}.args.{name}", value)
            for name, value in (item.get("args") or {}).items()
        }
        shown = item.get("shown") or {}
        if "withheld" in shown:  # a post-call hook refused its projection: nothing of it
            kept["excerpt"] = self.hold(f"{where}.excerpt", item.get("excerpt"))
            kept["summary"] = self.hold(f"{where}.summary", item.get("summary"))
        elif "excerpt" in shown:  # as its post-call hooks narrowed it, as a model sees it
            kept["excerpt"], kept["summary"] = shown["excerpt"], shown.get("summary")
        if not self._shareable(item) and "summary" in kept:  # it quotes the chooser's words
            kept["summary"] = self.hold(f"{where}.summary", item["summary"])
        return kept

    def unknowns(self, texts: list[Any], where: str) -> list[Any]:
        """Kept only when Warrant wrote them from the grant, a status or a shareable item."""
        return [
            text if text in self.kept_unknowns else self.hold(f"{where}[{n}]", text)
            for n, text in enumerate(texts)
        ]

    def reasons(self, texts: list[Any], where: str) -> list[Any]:
        """Kept when Warrant wrote them; the chooser's stop text in one held."""
        shown = []
        for n, text in enumerate(texts):
            if text in self.kept_reasons:
                shown.append(text)
            elif isinstance(text, str) and text.startswith(CHOOSER_ENDED):
                shown.append(CHOOSER_ENDED + self.hold(f"{where}[{n}]", text))
            else:
                shown.append(self.hold(f"{where}[{n}]", text))
        return shown

    def statements(self, statements: list[Any], where: str) -> list[Any]:
        """Each statement held; the refs it cites that the run holds kept."""
        return [
            {
                "statement": self.hold(f"{where}[{n}].statement", s.get("statement")),
                "refs": [r for r in s.get("refs") or () if self._citation(r)],
            }
            for n, s in enumerate(statements)
        ]

    def _citation(self, ref: object) -> bool:
        return isinstance(ref, str) and is_citation(ref) and base_ref(ref) in self.refs

    def listed(self, items: list[Any], where: str, keep: tuple[str, ...]) -> list[Any]:
        return [self.kept(item, f"{where}[{n}]", keep) for n, item in enumerate(items)]

    def kept(self, item: Mapping[str, Any], where: str, keep: tuple[str, ...]) -> dict[str, Any]:
        """The item with only the keys `keep` names (identifiers, codes, counts) and its call's
        tool when it is one; the rest held (a call's id is the chooser's: it may say anything)."""
        kept = {key: item[key] for key in keep if key in item}
        for key, value in item.items():
            if key in keep:
                continue
            if key == "call" and isinstance(value, Mapping):  # its tool, if it is one
                name = value.get("name")
                kept["call"] = {
                    part: (
                        name
                        if part == "name" and name in self.tools
                        else self.hold(f"{where}.call.{part}", value[part])
                    )
                    for part in value
                }
            else:
                kept[key] = self.hold(f"{where}.{key}", value)
        return kept

    def children(self, children: list[Any], where: str) -> list[Any]:
        return self.listed(children, where, CHILD_KEPT)

    def memory(self, notes: list[Any], where: str) -> list[Any]:
        """Recalled notes: a shareable one's text shown, a local one's held; the query held."""
        return [
            shown
            | ({"text": note["text"]} if note.get("share") == "any" and "text" in note else {})
            for note, shown in zip(notes, self.listed(notes, where, NOTE_KEPT), strict=True)
        ]

    def refusals(self, refusals: list[Any], where: str) -> list[Any]:
        return self.listed(refusals, where, ("turn", "code", "owner"))

    def pending(self, pending: list[Any], where: str) -> list[Any]:
        return self.listed(pending, where, ("interaction_id", "kind", "turn", "records"))

    def notes_saved(self, notes: list[Any], where: str) -> list[Any]:
        return self.listed(notes, where, REMEMBERED_KEPT)

    def stopped_by(self, stop: Mapping[str, Any], where: str) -> Any:
        return self.kept(stop, where, ("by", "at"))

    def stop_text(self, text: Any, where: str) -> Any:
        return self.hold(where, text) if text else text

    def statement(self, text: Any, where: str) -> Any:
        return text if text in self.run.written else self.hold(where, text)


def _person(item: Mapping[str, Any]) -> bool:
    """A person's answer or correction: their words, which may quote what they were shown."""
    return item.get("kind") == "human_answer"


def _leaves(value: Any) -> list[str]:
    """The texts inside a value: its strings, not its keys."""
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _leaves(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _leaves(item)]
    return [value] if isinstance(value, str) else []


def _chooser_words(item: Mapping[str, Any], run: RunFacts) -> list[str]:
    """The strings the chooser gave a call, less the record ids it named."""
    return [
        value
        for value in (item.get("args") or {}).values()
        if isinstance(value, str) and value and value not in run.records
    ]


def _structural(value: Any, run: RunFacts) -> bool:
    """A call argument a remote grader may see: a record id of the grant, a number, a flag."""
    if isinstance(value, str):
        return value in run.records
    return value is None or isinstance(value, bool | int | float)


PLAIN = frozenset(
    {"thread_id", "scenario", "goal", "status", "turns", "budget", "ending", "revision"}
    | {"parent", "report", "skills"}
)
"""Fields Warrant writes from the grant and the run's structure: shown as they are."""
CATALOG = frozenset(spec.name for specs in PROFILES.values() for spec in specs)
"""The tools a refused call may name and still be shown: any other name is the chooser's text."""
SHOWN = {
    "statement": "statement",
    "evidence": "evidence_items",
    "unknowns": "unknowns",
    "ending_reasons": "reasons",
    "refusals": "refusals",
    "hypotheses": "statements",
    "chooser_stop_text": "stop_text",
    "stopped_by": "stopped_by",
    "children": "children",
    "memory": "memory",
    "remembered": "notes_saved",
    "pending": "pending",
}
"""Fields shown part by part (by the method named); any other field is withheld whole."""
ITEM_REFERENCE = ("ref", "kind", "turn", "tool", "record", "sha256", "lane_ref")
"""What a withheld item keeps: enough to name and cite it (not its call id or lane: names a
chooser gave, which may say anything)."""
ITEM_PLAIN = frozenset(
    {"sources", "family", "summary", "excerpt", "truncated", "flags", "error", "unknowns"}
    | {"attempt", "body", "lines", "shown"}
)
"""What a shareable item shows as it is (its `args` are checked one by one, the rest held)."""
CHILD_KEPT = (
    "order",
    "status",
    "budget",
    "spent",
    "cursor",
    "evidence",
    "refs",
    "read",
)
NOTE_KEPT = ("ref", "note", "version", "sha256", "turn", "forgotten", "share", "by", "at")
REMEMBERED_KEPT = ("interaction_id", "note", "version", "project", "sha256", "by", "edited", "refs")
