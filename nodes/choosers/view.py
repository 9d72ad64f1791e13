"""What a chooser sees on one turn, and what a chooser is: the `ChooserView` it is given and the
`Chooser` protocol it implements."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, TypedDict

Proposal = str | Mapping[str, Any]


class _Frozen(TypedDict):
    """What `make_view` snapshots (a pickle of it) for the chooser's own copies."""

    catalog: tuple[dict[str, Any], ...]
    records: tuple[dict[str, str], ...]
    families: tuple[dict[str, Any], ...]
    delegation: dict[str, Any] | None
    skills: tuple[dict[str, Any], ...]
    memory: bool


"""JSON text or an already-decoded document; the guard parses both the same way."""


@dataclass(frozen=True)
class ChooserView:
    """What a chooser sees on one turn (DESIGN §2 invariant 2: a private copy).

    The catalog and records are taken from a pickle made with the view; the evidence, refusals
    and unknowns are read from the run's record (the store) when the chooser first reads one. Either
    way the chooser gets objects of its own, and a chooser that never looks (a script, a file) pays
    for none of it."""

    scenario: str
    goal: str
    turn: int
    budget_left: dict[str, float]
    _frozen: bytes = field(repr=False, compare=False)
    _record: Callable[[], Mapping[str, Sequence[Any]]] = field(repr=False, compare=False)

    @cached_property
    def _thawed(self) -> _Frozen:
        thawed: _Frozen = pickle.loads(self._frozen)
        return thawed

    @cached_property
    def _read(self) -> dict[str, tuple[Any, ...]]:
        # A copy through pickle: a store may hand back its own objects (LangGraph's in-memory store).
        read = {name: tuple(items) for name, items in self._record().items()}
        copied: dict[str, tuple[Any, ...]] = pickle.loads(
            pickle.dumps(read, protocol=pickle.HIGHEST_PROTOCOL)
        )
        return copied

    @property
    def catalog(self) -> tuple[dict[str, Any], ...]:
        """Documentation of the tools: names, descriptions, argument schemas. Not authority."""
        return self._thawed["catalog"]

    @property
    def delegation(self) -> dict[str, Any] | None:
        """What this run may delegate (`max_tasks`), or None where it may not (too deep)."""
        return self._thawed.get("delegation")

    @property
    def skills(self) -> tuple[dict[str, Any], ...]:
        """The scenario's methods (id, version, title, text, sha256): suggestions, not authority."""
        return self._thawed.get("skills", ())

    @property
    def has_memory(self) -> bool:
        """The run may recall the team's notes (and propose one): its manifest names a project."""
        return bool(self._thawed.get("memory"))

    @property
    def notes(self) -> tuple[dict[str, Any], ...]:
        """The notes recalled so far (M refs): history, never evidence; a forgotten one without text."""
        return self._read.get("notes", ())

    @property
    def records(self) -> tuple[dict[str, str], ...]:
        """Approved record ids and kinds (a large family's members are in `families`)."""
        return self._thawed["records"]

    @property
    def families(self) -> tuple[dict[str, Any], ...]:
        """The manifest's record families too large to list: glob, kind, member count, and the
        first and last member ids (a family tool names one by its glob)."""
        return self._thawed.get("families", ())

    @property
    def evidence(self) -> tuple[dict[str, Any], ...]:
        return self._read["evidence"]

    @property
    def refusals(self) -> tuple[dict[str, Any], ...]:
        return self._read["refusals"]

    @property
    def unknowns(self) -> tuple[str, ...]:
        return self._read["unknowns"]

    @property
    def handoffs(self) -> tuple[dict[str, Any], ...]:
        """The children's handoffs: their evidence refs (in this run's numbering), the lines they
        read, their unknowns, and their statements, which are the children's, not findings."""
        return self._read.get("handoffs", ())


def make_view(
    *,
    scenario: str,
    goal: str,
    turn: int,
    budget_left: dict[str, float],
    catalog: Sequence[Any],
    records: Sequence[Any],
    record: Callable[[], Mapping[str, Sequence[Any]]],
    families: Sequence[Any] = (),
    delegation: Mapping[str, Any] | None = None,
    skills: Sequence[Any] = (),
    memory: bool = False,
) -> ChooserView:
    """A view of `catalog` and `records` (snapshotted now, a pickle: several times faster than
    `copy.deepcopy`) and of what `record()` returns (`evidence`, `refusals`, `unknowns`: new
    objects read from the store, when first asked for)."""
    frozen = pickle.dumps(
        {
            "catalog": tuple(catalog),
            "records": tuple(records),
            "families": tuple(families),
            "delegation": delegation,
            "skills": tuple(skills),
            "memory": memory,
        },
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    return ChooserView(scenario, goal, turn, dict(budget_left), frozen, record)


class Chooser(Protocol):
    @property
    def actor(self) -> str:
        """Who is proposing, as recorded in the ledger (`chooser:scripted`, `chooser:file`); read
        only, so a frozen dataclass's field or a plain class attribute serves."""
        ...

    def choose(self, view: ChooserView) -> Proposal: ...
