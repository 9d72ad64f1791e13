"""The action document every chooser returns (DESIGN §5), and its strict parser.

Step one of two-step validation: is this an action document at all? Anything else (not JSON, both
or neither of `tool_calls`/`message`, too many calls, unknown fields) is `malformed_action`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from guards.refusals import GUARD, Refusal, RefusalCode
from tools.validation import describe_validation_error

MAX_DOCUMENT_CHARS = 64 * 1024
MAX_CALLS_PER_TURN = 4

CallId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")]
EvidenceRef = Annotated[str, StringConstraints(pattern=r"^[EH][1-9][0-9]{0,3}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class ToolCall(_Strict):
    id: CallId
    name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    args: dict[str, Any] = {}


class Hypothesis(_Strict):
    """A chooser's statement, which must cite existing evidence; never a verified finding."""

    statement: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    refs: Annotated[list[EvidenceRef], Field(min_length=1, max_length=20)]


class StopMessage(_Strict):
    kind: Literal["stop"]
    text: Annotated[str, StringConstraints(max_length=2000)] = ""
    hypotheses: Annotated[list[Hypothesis], Field(max_length=10)] = []


class AskUserMessage(_Strict):
    kind: Literal["ask_user"]
    question: Annotated[str, StringConstraints(min_length=1, max_length=2000)]


Message = Annotated[StopMessage | AskUserMessage, Field(discriminator="kind")]


class ActionDocument(_Strict):
    summary: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    tool_calls: (
        Annotated[list[ToolCall], Field(min_length=1, max_length=MAX_CALLS_PER_TURN)] | None
    ) = None
    message: Message | None = None

    @model_validator(mode="after")
    def _exactly_one_outcome(self) -> ActionDocument:
        if (self.tool_calls is None) == (self.message is None):
            raise ValueError("exactly one of tool_calls or message is required")
        return self


def parse_action(raw: object) -> ActionDocument | Refusal:
    """Parse a proposal (JSON text or an already-decoded object) into an action document."""
    if isinstance(raw, str):
        if len(raw) > MAX_DOCUMENT_CHARS:
            return _malformed(f"the document is longer than {MAX_DOCUMENT_CHARS} characters")
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return _malformed(f"not JSON: {str(exc)[:120]}")
    if not isinstance(raw, dict):
        return _malformed(f"expected a JSON object, got {type(raw).__name__}")
    if not _valid_unicode(raw):
        return _malformed("the document contains invalid Unicode (a lone surrogate)")
    try:
        return ActionDocument.model_validate(raw)
    except (ValidationError, RecursionError) as exc:
        detail = describe_validation_error(exc) if isinstance(exc, ValidationError) else "too deep"
        return _malformed(f"not an action document: {detail}")


def _valid_unicode(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return True  # deeper structures are refused by the schema anyway
    if isinstance(value, str):
        return value.isascii() or _encodable(value)
    if isinstance(value, dict):
        return all(
            _valid_unicode(key, depth + 1) and _valid_unicode(item, depth + 1)
            for key, item in value.items()
        )
    if isinstance(value, list):
        return all(_valid_unicode(item, depth + 1) for item in value)
    return True


def _encodable(text: str) -> bool:
    """UTF-8 encodes every code point but a lone surrogate (checked in C, not char by char)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _malformed(detail: str) -> Refusal:
    return Refusal(RefusalCode.MALFORMED_ACTION, GUARD, detail)
