"""A direct answer: lines of approved reference material that speak of the question's terms,
each cited — the team's skills (`lab/skills/`, `$WARRANT_SKILLS`, a scenario's `skills/`) and
the specifications the candidate scenarios approve. No log, history or report is opened: they are
a run's records, read only by a governed run. Only what a run could read without a person is
read: a specification marked `approval = "human"` is not opened at all (a run would wait for a
person's approval to read it), and the answer names it in one line (`DirectAnswer.not_opened`).

Reference material is quoted, never summarised into a claim: what no reference mentions is said
so, with the way to research it."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from contract.errors import ManifestError, RecordRefusal
from scenario.manifest import RecordEntry
from scenario.reading import open_record, reading
from scenario.registry import admit_entry, manifest_document
from scenario.skills import FOLDER_ENV, SHIPPED, skill_index

MAX_QUOTES = 8
MAX_LINE_CHARS = 300
STOPWORDS = frozenset(
    [
        "what",
        "does",
        "do",
        "did",
        "is",
        "are",
        "the",
        "a",
        "an",
        "in",
        "of",
        "our",
        "we",
        "you",
        "i",
        "how",
        "to",
        "for",
        "and",
        "or",
        "mean",
        "means",
        "meaning",
        "why",
        "when",
        "where",
        "which",
        "this",
        "that",
        "with",
        "from",
        "on",
        "at",
        "by",
        "be",
        "it",
        "its",
        "explain",
        "define",
        "should",
        "can",
        "flow",
        "use",
        "used",
    ]
)


@dataclass(frozen=True)
class Quote:
    source: str
    """`skill triage/uvm-regression v2` or `spec lab/spec/reset_controller.md`."""
    sha256: str
    line: int
    text: str


@dataclass(frozen=True)
class DirectAnswer:
    terms: tuple[str, ...]
    quotes: tuple[Quote, ...]
    read: tuple[str, ...]
    """Every source opened, as cited: skills and specifications only."""
    unopened: tuple[str, ...] = ()
    """Specifications not opened because reading one needs a person's approval, as cited."""

    @property
    def not_opened(self) -> list[str]:
        """One line for each specification left unread."""
        return [f"{source} {NEEDS_APPROVAL}" for source in self.unopened]

    @property
    def unknown(self) -> str | None:
        if self.quotes:
            return None
        terms = ", ".join(self.terms) or "its words"
        return (
            f"No approved reference material mentions {terms}; `warrant ask --research` looks in"
            " a scenario's records instead."
        )


def terms_of(question: str) -> tuple[str, ...]:
    """The words that carry the question: not stop words, three characters or more."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]", question)
    seen: dict[str, None] = {}
    for word in words:
        if word.lower() not in STOPWORDS and len(word) >= 3:
            seen.setdefault(word, None)
    return tuple(seen)


def direct_answer(question: str, manifests: Iterable[Path]) -> DirectAnswer:
    terms = terms_of(question)
    specs, unopened = _specs(manifests)
    sources = [*_skills(manifests), *specs]
    quotes = [quote for source in sources for quote in _quoted(source, terms)]
    ranked = sorted(quotes, key=lambda q: -_weight(q.text, terms))[:MAX_QUOTES]
    shown = tuple(q for q in quotes if q in ranked)
    return DirectAnswer(terms, shown, tuple(name for name, _, _ in sources), unopened)


NEEDS_APPROVAL = "needs a person's approval to be read; not opened"


Source = tuple[str, str, list[str]]
"""(as cited, sha256, lines)."""


def _skills(manifests: Iterable[Path]) -> list[Source]:
    folders = [
        *(manifest.resolve().parent / "skills" for manifest in manifests),
        *([Path(os.environ[FOLDER_ENV])] if os.environ.get(FOLDER_ENV) else []),
        SHIPPED,
    ]
    found = []
    for skill_id, path in sorted(skill_index(folders).items()):
        data = path.read_bytes()
        text = data.decode("utf-8", "replace")
        version = re.search(r"^version\s*=\s*(\d+)", text, re.MULTILINE)
        name = f"skill {skill_id} v{version.group(1) if version else '?'}"
        found.append((name, hashlib.sha256(data).hexdigest(), text.splitlines()))
    return found


def _specs(manifests: Iterable[Path]) -> tuple[list[Source], tuple[str, ...]]:
    """The specifications a run may read without a person, read; and those only a person may let
    be read, unread (never opened, not even to be hashed: `admit_entry` reads the file), unless
    another manifest lets the same file be read without one."""
    found: dict[str, Source] = {}
    read: set[str] = set()
    unopened: dict[str, str] = {}
    """Where each file left unread is (resolved, never opened) → as cited."""
    for manifest in manifests:
        try:
            entries = [
                item
                for item in manifest_document(manifest).record
                if isinstance(item, RecordEntry) and item.kind == "spec"
            ]
        except ManifestError:
            continue
        for entry in entries:
            if entry.approval != "none":
                where = str((manifest.resolve().parent / entry.path).resolve())
                unopened.setdefault(where, f"spec {entry.id}")
                continue
            try:
                record = admit_entry(manifest, entry)
                with reading(10.0) as session, open_record(record) as stream:
                    lines = stream.read().decode("utf-8", "replace").splitlines()
                    session.verify()
            except (ManifestError, RecordRefusal, OSError):
                continue
            found.setdefault(record.sha256, (f"spec {entry.id}", record.sha256, lines))
            read.add(record.path)
    # A file another manifest lets be read without a person was read, under that manifest.
    return list(found.values()), tuple(
        dict.fromkeys(cited for where, cited in unopened.items() if where not in read)
    )


def _quoted(source: Source, terms: tuple[str, ...]) -> list[Quote]:
    name, sha256, lines = source
    return [
        Quote(name, sha256, number, text.strip()[:MAX_LINE_CHARS])
        for number, text in enumerate(lines, 1)
        if _weight(text, terms)
    ]


def _weight(text: str, terms: tuple[str, ...]) -> int:
    """How many of the terms the line holds as whole words (case-insensitive)."""
    return sum(
        1
        for term in terms
        if re.search(rf"(?<![\w]){re.escape(term)}(?![\w])", text, re.IGNORECASE)
    )
