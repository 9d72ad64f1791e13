"""The scenarios a question may be researched in: the user's scenario roots, as cards.

With `--in`, what it names: a built-in id, a manifest, or a folder of manifests. Without it, the
built-in scenarios and the manifests under `$WARRANT_SCENARIO_ROOTS`. A research route never
starts anywhere else (`chosen`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from contract.errors import ManifestError
from lab import builtin_manifests
from nodes.admit import SCENARIO_ROOTS
from scenario.cards import Card, card_of, cards_under


class EntryError(ValueError):
    """Bad input to Entry (`--in` naming nothing usable, a choice outside the roots): one line."""


@dataclass(frozen=True)
class Candidates:
    cards: tuple[Card, ...]
    manifests: dict[str, Path]
    """Card id → its manifest (what a research run is started with)."""
    skipped: tuple[str, ...] = ()
    """`.toml` files under a root that are not usable manifests, one line each."""

    def chosen(self, scenario: str | None) -> Path:
        """The manifest of a chosen scenario; an `EntryError` for one outside the roots."""
        if scenario is None or scenario not in self.manifests:
            shown = ", ".join(list(self.manifests)[:8]) or "none"
            raise EntryError(
                f"scenario {str(scenario)[:200]!r} is outside your scenario roots (candidates: {shown})"
            )
        return self.manifests[scenario]


def candidates(given: str | None) -> Candidates:
    """The candidate scenarios for `--in` (None: built-ins and `$WARRANT_SCENARIO_ROOTS`)."""
    builtins = builtin_manifests()
    if given is not None:
        return _named(given, builtins)
    found = Candidates(
        tuple(card_of(path, scenario_id) for scenario_id, path in builtins.items()),
        dict(builtins),
    )
    for root in _roots():
        found = _merged(found, *_folder(root))
    return found


def _named(given: str, builtins: dict[str, Path]) -> Candidates:
    if given in builtins:
        return Candidates((card_of(builtins[given], given),), {given: builtins[given]})
    path = Path(given).expanduser()
    if path.is_dir():
        cards, manifests, skipped = _folder(path)
        if not cards:
            raise EntryError(f"--in {given!r}: no scenario manifest (*.toml) in that folder")
        return Candidates(cards, manifests, skipped)
    if path.is_file():
        try:
            card = card_of(path.resolve())
        except ManifestError as exc:
            raise EntryError(f"--in {given!r}: {str(exc).splitlines()[0]}") from None
        return Candidates((card,), {card.id: path.resolve()})
    known = ", ".join(builtins)
    raise EntryError(f"--in {given!r} is not a built-in scenario ({known}), a manifest or a folder")


def _folder(folder: Path) -> tuple[tuple[Card, ...], dict[str, Path], tuple[str, ...]]:
    cards, skipped = cards_under(folder.resolve())
    return tuple(cards), {card.id: Path(card.id) for card in cards}, tuple(skipped)


def _merged(
    found: Candidates, cards: tuple[Card, ...], manifests: dict[str, Path], skipped: tuple[str, ...]
) -> Candidates:
    return Candidates(
        found.cards + cards, {**found.manifests, **manifests}, found.skipped + skipped
    )


def _roots() -> list[Path]:
    return [
        Path(part).expanduser()
        for part in os.environ.get(SCENARIO_ROOTS, "").split(os.pathsep)
        if part and Path(part).expanduser().is_dir()
    ]
