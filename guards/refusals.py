"""Refusal codes and the one value type that carries a refusal.

Find the owner of any refusal in one hop: code → `RefusalCode` → the one check that emits it
(`guards/decide.py`, the tool's argument model or record registry, or the human node).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tools.validation import storable_text


class RefusalCode(StrEnum):
    # Owned by a tool (its strict argument model or its record registry).
    INVALID_ARGUMENT = "invalid_argument"
    UNAPPROVED_RECORD = "unapproved_record"
    RECORD_CHANGED = "record_changed"
    RECORD_UNAVAILABLE = "record_unavailable"
    TOOL_TIMEOUT = "tool_timeout"
    # Owned by the guard.
    MALFORMED_ACTION = "malformed_action"
    UNKNOWN_TOOL = "unknown_tool"
    UNKNOWN_REFERENCE = "unknown_reference"
    STEP_BUDGET_EXHAUSTED = "step_budget_exhausted"
    EVIDENCE_BUDGET_EXHAUSTED = "evidence_budget_exhausted"
    DEADLINE_PASSED = "deadline_passed"
    REPEATED_REQUEST = "repeated_request"
    DUPLICATE_CALL_ID = "duplicate_call_id"
    QUESTION_BUDGET_EXHAUSTED = "question_budget_exhausted"
    # Owned by a person, or by the human node that receives their reply.
    REJECTED = "rejected"
    INTERACTION_MISMATCH = "interaction_mismatch"
    MALFORMED_REPLY = "malformed_reply"
    # Owned by the runtime (admission and the run's own bookkeeping).
    THREAD_IN_USE = "thread_in_use"
    STATE_TAMPERED = "state_tampered"


GUARD = "guard"
HUMAN = "human"
RUNTIME = "runtime"


def tool_owner(name: str) -> str:
    return f"tool:{name}"


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
            "owner": self.owner,
            "detail": self.detail,
            "call": bounded(self.call),
        }


INT64 = 1 << 63


def bounded(value: Any, depth: int = 0) -> Any:
    """A proposal fragment safe to store and show: small, valid Unicode, 64-bit ints.

    Offending proposals are recorded as evidence of what was refused, but they are hostile input:
    a huge integer or a lone surrogate would otherwise break the checkpoint serializer.
    """
    if depth > 8:
        return "…"
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
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
