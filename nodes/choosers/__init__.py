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
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nodes.choosers.adversary import AdversaryChooser
from nodes.choosers.baseline import BASELINE, TriageBaseline
from nodes.choosers.cassette import CassetteError, read_cassette
from nodes.choosers.client import MCP_CLIENT, SessionGone
from nodes.choosers.view import Chooser, ChooserView, Proposal
from scenario.files import open_regular
from scenario.registry import Scenario


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
    if kind in ("model", "adversary", BASELINE, MCP_CLIENT) and not argument:
        return kind, ""
    raise ChooserError(
        f"unknown chooser {spec!r}: use 'scripted', 'baseline', 'file:PATH', 'model',"
        " 'replay:PATH', 'adversary' or 'mcp-client'"
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
    if kind in ("model", "adversary", MCP_CLIENT):
        return kind
    if kind == "scripted":
        if scenario.script:
            return spec
        if scenario.families and scenario.profile == "triage":
            return BASELINE  # a nightly with no script: the triage baseline
        raise ChooserError(
            f"scenario {scenario.id} has no scripted baseline and approves no record family;"
            " use --chooser file:PATH or --chooser model"
        )
    if kind == BASELINE:
        return kind
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
    if kind == BASELINE:
        return TriageBaseline()
    if kind == MCP_CLIENT:  # a session's run resumed without its session
        return SessionGone()
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
