"""Choosers: whatever proposes the next action. They propose; they never authorize.

Every chooser implements the `Chooser` protocol and receives a `ChooserView`, a private deep copy of
what it may see; changing it changes nothing in the run. A chooser keeps no state between turns:
what it proposes on turn N depends only on its source and the view, so a resumed run asks again
exactly where it stopped.
"""

from __future__ import annotations

import copy
import functools
import os
import pickle
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from nodes.adversary import AdversaryChooser
from nodes.cassette import CassetteError, read_cassette
from tools.files import open_regular
from tools.records import Scenario

Proposal = str | Mapping[str, Any]
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
    def _thawed(self) -> dict[str, tuple[Any, ...]]:
        return pickle.loads(self._frozen)

    @cached_property
    def _read(self) -> dict[str, tuple[Any, ...]]:
        # A copy through pickle: a store may hand back its own objects (LangGraph's in-memory store).
        read = {name: tuple(items) for name, items in self._record().items()}
        return pickle.loads(pickle.dumps(read, protocol=pickle.HIGHEST_PROTOCOL))

    @property
    def catalog(self) -> tuple[dict[str, Any], ...]:
        """Documentation of the tools: names, descriptions, argument schemas. Not authority."""
        return self._thawed["catalog"]

    @property
    def records(self) -> tuple[dict[str, str], ...]:
        """Approved record ids and kinds."""
        return self._thawed["records"]

    @property
    def evidence(self) -> tuple[dict[str, Any], ...]:
        return self._read["evidence"]

    @property
    def refusals(self) -> tuple[dict[str, Any], ...]:
        return self._read["refusals"]

    @property
    def unknowns(self) -> tuple[str, ...]:
        return self._read["unknowns"]


def make_view(
    *,
    scenario: str,
    goal: str,
    turn: int,
    budget_left: dict[str, float],
    catalog: Sequence[Any],
    records: Sequence[Any],
    record: Callable[[], Mapping[str, Sequence[Any]]],
) -> ChooserView:
    """A view of `catalog` and `records` (snapshotted now, a pickle: several times faster than
    `copy.deepcopy`) and of what `record()` returns (`evidence`, `refusals`, `unknowns`: new
    objects read from the store, when first asked for)."""
    frozen = pickle.dumps(
        {"catalog": tuple(catalog), "records": tuple(records)}, protocol=pickle.HIGHEST_PROTOCOL
    )
    return ChooserView(scenario, goal, turn, dict(budget_left), frozen, record)


class Chooser(Protocol):
    actor: str
    """Who is proposing, as recorded in the ledger (`chooser:scripted`, `chooser:file`)."""

    def choose(self, view: ChooserView) -> Proposal: ...


class ChooserError(ValueError):
    """A chooser spec or source that cannot be used; the message says why in one line."""


def _end_of(source: str) -> dict[str, Any]:
    text = f"The {source} has no further actions."
    return {"summary": text, "message": {"kind": "stop", "text": text}}


@dataclass(frozen=True)
class ScriptedChooser:
    """The scenario author's fixed sequence (the manifest's `[[script]]`); no judgment."""

    script: Sequence[Mapping[str, Any]]
    actor: str = "chooser:scripted"

    def choose(self, view: ChooserView) -> Proposal:
        if view.turn <= len(self.script):
            return copy.deepcopy(dict(self.script[view.turn - 1]))
        return _end_of("script")


@dataclass(frozen=True)
class FileChooser:
    """One action document per non-blank line of a JSONL file, line N on turn N."""

    path: Path
    actor: str = "chooser:file"

    def choose(self, view: ChooserView) -> Proposal:
        lines = _document_lines(self.path)
        return lines[view.turn - 1] if len(lines) >= view.turn else _end_of("action file")


def _document_lines(path: Path) -> tuple[str, ...]:
    """The file's non-blank lines, decoded leniently. The file is read
    whole at every turn (a person may append to it), and split only when its bytes change."""
    try:
        with open_regular(path) as handle:
            data = handle.read()
    except OSError as exc:
        raise ChooserError(f"cannot read action file {path}: {exc.strerror or exc}") from None
    return _nonblank_lines(data)


@functools.lru_cache(maxsize=8)
def _nonblank_lines(data: bytes) -> tuple[str, ...]:
    lines = (raw.decode("utf-8", "replace").strip() for raw in data.split(b"\n"))
    return tuple(line for line in lines if line)


def check_action_file(path: Path) -> None:
    """Refuse a file that cannot serve as a chooser: unreadable, binary, not UTF-8, or empty."""
    try:
        with open_regular(path) as handle:
            data = handle.read()
    except OSError as exc:
        raise ChooserError(f"cannot read action file {path}: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise ChooserError(f"action file {path} is binary, not JSONL text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ChooserError(f"action file {path} is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ChooserError(f"action file {path} is empty")


def parse_spec(spec: str, extra: Collection[str] = ()) -> tuple[str, str]:
    """Split `kind[:argument]` and check the kind: `scripted`, `file:PATH`, or an extra name."""
    if spec in extra:
        return spec, ""
    kind, _, argument = spec.partition(":")
    if kind == "scripted" and not argument:
        return kind, ""
    if kind in ("file", "replay") and argument:
        return kind, argument
    if kind in ("model", "adversary") and not argument:
        return kind, ""
    raise ChooserError(
        f"unknown chooser {spec!r}: use 'scripted', 'file:PATH', 'model', 'replay:PATH' or 'adversary'"
    )


CHOOSER_DIR = "WARRANT_CHOOSER_DIR"
"""On the server, a folder (besides the scenario's own) where `file:` and `replay:` choosers may lie."""


def admit_spec(
    spec: str, scenario: Scenario, extra: Collection[str] = (), served: bool = False
) -> str:
    """Check a chooser spec before a run starts; returns it with any path made absolute. On the
    server (`served`), whoever sends a run input is not the machine's user: a `file:` or `replay:`
    chooser must lie in the scenario's folder or under `$WARRANT_CHOOSER_DIR`, or any file the
    server can read would be quoted into the run's ledger."""
    kind, argument = parse_spec(spec, extra)
    if kind in extra:
        return kind
    if kind in ("model", "adversary"):
        return kind
    if kind == "scripted":
        if not scenario.script:
            raise ChooserError(
                f"scenario {scenario.id} has no scripted baseline; use --chooser file:PATH"
            )
        return spec
    path = Path(argument).expanduser().resolve()
    if served:
        _check_served_path(path, kind, Path(scenario.manifest).resolve().parent)
    if kind == "replay":
        check_cassette(path)
    else:
        check_action_file(path)
    return f"{kind}:{path}"


def check_cassette(path: Path) -> None:
    """Refuse a cassette that cannot be replayed before the run starts: unreadable, empty, or a
    line that is not a recorded attempt. Whether each recorded request matches this run's is known
    only when that turn is assembled (it depends on the evidence before it): see `replay`."""
    try:
        if not read_cassette(path):
            raise ChooserError(f"cassette {path} is empty")
    except CassetteError as exc:
        raise ChooserError(str(exc)) from None


def chooser_for(
    spec: str, script: Sequence[Mapping[str, Any]], extra: Mapping[str, Chooser]
) -> Chooser:
    """The chooser named by an admitted spec; `script` is the scenario's scripted baseline and
    `extra` holds embedded callers' own choosers."""
    kind, argument = parse_spec(spec, extra)
    if kind in extra:
        return extra[kind]
    if kind == "scripted":
        return ScriptedChooser(script)
    if kind == "adversary":
        return AdversaryChooser()
    return FileChooser(Path(argument))


def _check_served_path(path: Path, kind: str, scenario_folder: Path) -> None:
    allowed = [scenario_folder]
    if folder := os.environ.get(CHOOSER_DIR):
        allowed.append(Path(folder).expanduser().resolve())
    if not any(path.is_relative_to(folder) for folder in allowed):
        raise ChooserError(
            f"a {kind}: chooser given to the server must lie in the scenario's folder"
            f" ({scenario_folder}) or under ${CHOOSER_DIR}"
        )
