"""Provenance that travels with a value: which sources it came from, and which of them may not
leave this machine.

A value derived from records (an excerpt, a summary, a computed result, an MCP result, a note, an
unknown, a statement) carries a `Provenance`; its locality is the most restrictive of its sources',
and nothing lowers it (a person approving a note does not make a local source shareable). Every
sink outside the machine — a model route, an MCP server's arguments, an MCP client of `warrant
mcp serve`, a note saved for other runs, an artifact shared to a reader — asks one question of a
provenance, `may_leave`, before anything is sent; text a sink must receive anyway (a model's request)
passes `guards.egress.gate` as the last check.

The chooser's own words (its calls' arguments, statements, unknowns, stop text, notes, questions)
are derived from everything it was shown: their provenance is `words_provenance`, the join of every
evidence item and recalled note of the run (CaMeL's rule for a planner's output).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Share = Literal["any", "local"]
Locality = Literal["local", "remote"]
"""Where a sink is: on this machine's side (`local`) or anywhere else (`remote`): a model route,
an MCP server, a client of `warrant mcp serve`, a reader of a shared revision."""


@dataclass(frozen=True)
class Provenance:
    """A value's provenance: its sources, and those whose content stays on this machine."""

    sources: frozenset[str] = frozenset()
    local: frozenset[str] = frozenset()

    @property
    def share(self) -> Share:
        return "local" if self.local else "any"

    def joined(self, *others: Provenance) -> Provenance:
        """The provenance of a value derived from this one and `others`: every source, every local one."""
        return Provenance(
            self.sources.union(*(other.sources for other in others)),
            self.local.union(*(other.local for other in others)),
        )

    def as_record(self) -> dict[str, Any]:
        """As state and the ledger keep it (sorted lists: the same bytes at every seal)."""
        return {"share": self.share, "sources": sorted(self.sources), "local": sorted(self.local)}


UNMARKED = "a source of no readable provenance"
"""The local source named for a value that carries no readable provenance (deny by default)."""


def provenance_from(value: object) -> Provenance | None:
    """A recorded provenance (`Provenance.as_record`), or None where there is none or it is malformed."""
    if not isinstance(value, Mapping):
        return None
    sources, local = value.get("sources"), value.get("local")
    if not isinstance(sources, list) or not isinstance(local, list):
        return None
    if not all(isinstance(name, str) for name in [*sources, *local]):
        return None
    return Provenance(frozenset(sources), frozenset(local))


def may_leave(provenance: Provenance, locality: Locality) -> bool:
    """The one question every sink asks: may a value of this provenance reach a party there?"""
    return locality == "local" or not provenance.local


def source_provenance(source: str, share: object) -> Provenance:
    """One source's provenance: local unless it is marked shareable (`share = "any"`)."""
    return Provenance(frozenset({source}), frozenset() if share == "any" else frozenset({source}))


def item_provenance(item: Mapping[str, Any], shares: Mapping[str, Mapping[str, Any]]) -> Provenance:
    """An evidence item's provenance: the one it carries, else one made from what it names (its
    sources, else its record; its family's recorded share). `shares`: source id → its entry
    (`share`); a source missing from it is local. A person's answer has no source: their words."""
    carried = provenance_from(item.get("provenance"))
    if carried is not None:
        return carried
    if "provenance" in item:  # something is there, but not a provenance: nothing may trust it
        return Provenance(frozenset({UNMARKED}), frozenset({UNMARKED}))
    named = [str(source.get("record")) for source in item.get("sources") or ()]
    family = item.get("family")
    if not named and family is None and item.get("record") is not None:
        named = [str(item["record"])]
    known = [source_provenance(name, (shares.get(name) or {}).get("share")) for name in named]
    if isinstance(family, Mapping):
        known.append(source_provenance(str(family.get("name")), family.get("share")))
    return Provenance().joined(*known)


def note_provenance(note: Mapping[str, Any]) -> Provenance:
    """A recalled note's provenance: the one it was saved with, else its `share` (local unless `any`)."""
    carried = provenance_from(note.get("provenance"))
    if carried is not None:
        return carried
    return source_provenance(f"note:{note.get('id', '?')}", note.get("share", "any"))


def read_locally(
    already: Iterable[str],
    receipts: Iterable[Mapping[str, Any]],
    notes: Iterable[Mapping[str, Any]],
) -> list[str]:
    """The local sources of all a run was shown, with those of `receipts` and recalled `notes` as
    they are committed: sorted, so that the run's cursor seals the same bytes."""
    local = set(already).union(
        *(item_provenance(item, {}).local for item in receipts),
        *(note_provenance(note).local for note in notes),
    )
    return sorted(local)


def words_provenance(local_read: Iterable[str]) -> Provenance:
    """The provenance of what the chooser writes (its calls' arguments, statements, unknowns,
    stop text, questions, notes): every local source of all it was shown (`read_locally`)."""
    local = frozenset(local_read)
    return Provenance(local, local)


def local_egress(server: str, locality: Locality, local_read: Iterable[str]) -> str | None:
    """Why a call to MCP server `server` at `locality` may not be sent, in one line; None when it
    may. Its arguments are the chooser's words: as local as all it was shown, except what that
    server itself returned (its results go back to where they came from)."""
    own = f"mcp:{server}."
    local = sorted(source for source in local_read if not source.startswith(own))
    if locality == "local" or not local:
        return None
    named = ", ".join(local[:3]) + (f" and {len(local) - 3} more" if len(local) > 3 else "")
    return (
        f"server {server!r} is not marked local, and this call's arguments come from a chooser"
        f' shown local content ({named}); mark the server `locality = "local"` if it runs on'
        " this machine's side"
    )
