"""What a hook is given and what it answers: the whole of a hook's interface, read-only views in
and verdicts out (`guards/hooks.py` runs them; a hook module imports these from `guards.hooks`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Allow:
    pass


ALLOW = Allow()


@dataclass(frozen=True)
class Block:
    reason: str


@dataclass(frozen=True)
class CallView:
    """A call the guard approved, read-only: its tool, validated arguments and record ids."""

    tool: str
    args: Mapping[str, Any]
    records: Mapping[str, str]


@dataclass(frozen=True)
class RunView:
    scenario: str
    turn: int
    evidence_refs: tuple[str, ...]


@dataclass(frozen=True)
class ReceiptView:
    """A copy of a receipt: what the tool returned for one call."""

    ref: str
    tool: str
    record: str
    summary: str
    lines: tuple[tuple[int, str], ...]
    """(line number, text) in order."""


@dataclass(frozen=True)
class Projection:
    """What the model is to be shown of a receipt: its summary and some of its lines, narrowed."""

    summary: str
    lines: tuple[tuple[int, str], ...]
