"""Refusal codes and the one value type that carries a refusal.

The codes and owners are the contract's (`contract/codes.py`); find the owner of any refusal in
one hop: code → `RefusalCode` → the one check that emits it (`guards/decide.py`, `guards/checks.py`, the tool's
argument model or record registry, or the human node).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract.codes import RefusalCode, tool_owner
from contract.shapes import RecordedRefusal
from contract.text import storable_text
from tools.storable import INT64, storable

__all__ = ["Refusal", "RefusalCode", "bounded", "tool_owner"]


@dataclass(frozen=True)
class Refusal:
    """A refused proposal: what was refused, by whom, and why in one line."""

    code: RefusalCode
    owner: str
    """`guard`, `tool:<name>`, `human` or `runtime`."""
    detail: str
    call: dict[str, Any] | None = None
    """The offending tool call as proposed, or None when the whole document was refused."""

    def to_dict(self) -> dict[str, Any]:
        # Not `dataclasses.asdict`: it copies `call` recursively, and a call is hostile input.
        return {
            "code": self.code.value,
            "owner": str(
                self.owner
            ),  # plain text in state: an enum is a type the checkpoint must know
            "detail": self.detail,
            "call": bounded(self.call),
        }

    def recorded(self, turn: int) -> RecordedRefusal:
        """The refusal as the run records it, at choice `turn` (`WarrantState.refusals`)."""
        return RecordedRefusal(
            turn=turn,
            code=self.code.value,
            owner=str(self.owner),
            detail=self.detail,
            call=bounded(self.call),
        )


def bounded(value: Any, depth: int = 0) -> Any:
    """A proposal fragment safe to store and show: small, valid Unicode, 64-bit ints, floats
    every store keeps (`tools.storable`).

    Offending proposals are recorded as evidence of what was refused, but they are hostile input:
    a huge integer or a lone surrogate would otherwise break the checkpoint serializer.
    """
    if depth > 8:
        return "…"
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):  # NaN, infinities, -0.0, 1e16…: their typed forms
        return storable(value)
    if isinstance(value, int):
        return value if -INT64 <= value < INT64 else f"<int of {len(str(abs(value)))} digits>"
    if isinstance(value, str):
        text = storable_text(value)
        return text if len(text) <= 500 else text[:499] + "…"
    if isinstance(value, dict):
        return {
            bounded(str(key), depth + 1): bounded(item, depth + 1)
            for key, item in list(value.items())[:50]
        }
    if isinstance(value, list | tuple):
        return [bounded(item, depth + 1) for item in list(value)[:50]]
    return bounded(repr(value), depth + 1)
