"""A scenario as Entry may see it (`guards.entry.Card`): its id, profile, goal and the names of
the records it approves, counted — read from the manifest alone. No record is opened or hashed
(`load_scenario` would read every one): a directory of sources is not evidence they were read."""

from __future__ import annotations

from pathlib import Path

from guards.entry import Card, names_of
from tools.errors import ManifestError
from tools.records.families import expand, glob_problem
from tools.records.manifest import RecordFamily
from tools.records.registry import manifest_document

MAX_CANDIDATES = 200
"""Manifests a folder offers Entry at most; the rest are not candidates (and said so)."""


def card_of(manifest: Path, scenario_id: str | None = None) -> Card:
    """The manifest's card, named `scenario_id` (a built-in id) or by its path; a
    `ManifestError` when it is not a manifest."""
    document = manifest_document(manifest)
    ids: list[str] = []
    for item in document.record:
        if isinstance(item, RecordFamily):
            members = [] if glob_problem(item.glob) else expand(manifest.parent, item.glob)
            ids += [item.glob, *members]
        else:
            ids.append(item.id)
    named = scenario_id or str(manifest)
    records = sum(1 for item in ids if "*" not in item)
    return Card(named, document.profile, document.goal, names_of(document.id, ids), records)


def cards_under(folder: Path) -> tuple[list[Card], list[str]]:
    """The manifests under `folder` (`*.toml`, up to `MAX_CANDIDATES`) as cards, and one line
    for each `.toml` that is not a usable manifest."""
    cards, skipped = [], []
    for path in sorted(folder.rglob("*.toml"))[:MAX_CANDIDATES]:
        try:
            cards.append(card_of(path))
        except ManifestError as exc:
            skipped.append(str(exc).splitlines()[0])
    return cards, skipped
