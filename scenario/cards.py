"""A scenario as Entry may see it (`Card`; `guards.entry` decides on it): its id, profile, goal and the names of
the records it approves, counted — read from the manifest alone. No record is opened or hashed
(`load_scenario` would read every one): a directory of sources is not evidence they were read."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from contract.errors import ManifestError
from scenario.families import expand, glob_problem
from scenario.manifest import RecordFamily
from scenario.registry import manifest_document

GENERIC_NAMES = frozenset({"lab", "runs", "run", "log", "logs", "spec", "history", "sta", "csv"})
"""Parts of record names too common to say which scenario a question is about."""

MAX_CANDIDATES = 200
"""Manifests a folder offers Entry at most; the rest are not candidates (and said so)."""


@dataclass(frozen=True)
class Card:
    """What Entry may know of a scenario: never a record's content."""

    id: str
    """A built-in id or the manifest's path as the caller may run it."""
    profile: str
    goal: str
    names: frozenset[str]
    """Lower-cased names its records are known by: ids, file stems, folders, the scenario id."""
    records: int
    """How many records it approves (a family's members counted)."""


def names_of(scenario_id: str, record_ids: Iterable[str]) -> frozenset[str]:
    """The names a scenario's records are known by: each id, its file name and stem (`reset_smoke`
    of `lab/runs/R42/reset_smoke.log`), its folders (`R42`), and the scenario id."""
    names = {scenario_id.lower()}
    for record_id in record_ids:
        parts = [part for part in re.split(r"[/\\]", record_id.lower()) if part and "*" not in part]
        if "*" not in record_id:
            names.add(record_id.lower())
        names.update(parts)
        if parts:
            names.add(parts[-1].split(".", 1)[0])
    return frozenset(name for name in names if name not in GENERIC_NAMES and len(name) > 1)


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
