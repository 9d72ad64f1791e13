"""Bounded, line-numbered excerpts: the only shape in which tools return content."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from pydantic import BaseModel, ConfigDict

from tools.flags import INSTRUCTION_LIKE, instruction_flags

MAX_LINE_CHARS = 400
"""Longer lines are clipped; the excerpt says how many characters were left out."""
UNDECODABLE = "undecodable_bytes"


class Line(BaseModel):
    """One line of a record, with its 1-based number in the record."""

    model_config = ConfigDict(frozen=True)

    number: int
    text: str
    flags: tuple[str, ...] = ()


class Excerpt(BaseModel):
    """What a tool returns: a one-line summary and bounded lines quoted from one record."""

    model_config = ConfigDict(frozen=True)

    summary: str
    lines: tuple[Line, ...]
    truncated: bool
    """More matched or belonged to the section than is shown."""

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(sorted({flag for line in self.lines for flag in line.flags}))


def make_line(number: int, raw: bytes | str) -> Line:
    """Decode leniently, strip the line ending, flag, then clip to `MAX_LINE_CHARS`."""
    flags: tuple[str, ...] = ()
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", "replace")
        if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            flags = (UNDECODABLE,)
    else:
        text = raw
    text = text.rstrip("\r\n")
    flags = instruction_flags(text) + flags
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [+{len(text) - MAX_LINE_CHARS} chars]"
    return Line(number=number, text=text, flags=flags)


def make_excerpt(summary: str, lines: Iterable[Line], truncated: bool) -> Excerpt:
    return Excerpt(summary=summary, lines=flag_split_instructions(list(lines)), truncated=truncated)


def _messages(lines: list[Line]) -> list[str]:
    """The lines without their columns: tokens with no letter (times, delays, `^`, `@`) and the
    leading tokens every line shares (a log prefix), which would break up a split sentence."""
    words = [
        [word for word in line.text.split() if any(c.isalpha() for c in word)] for line in lines
    ]
    shared = 0
    for column in zip(*words, strict=False):
        if len(set(column)) > 1:
            break
        shared += 1
    return [" ".join(tokens[shared:]) for tokens in words]


def flag_split_instructions(lines: list[Line], window: int = 3) -> tuple[Line, ...]:
    """Flag consecutive lines that read like an instruction only when joined (a split injection)."""
    flagged = [set(line.flags) for line in lines]
    for start in range(len(lines)):
        run = lines[start : start + window]
        if len(run) < 2 or any(b.number != a.number + 1 for a, b in pairwise(run)):
            continue
        if instruction_flags(" ".join(line.text for line in run)) or instruction_flags(
            " ".join(_messages(run))
        ):
            for offset in range(len(run)):
                flagged[start + offset].add(INSTRUCTION_LIKE)
    return tuple(
        line
        if set(line.flags) == flags
        else line.model_copy(update={"flags": tuple(sorted(flags))})
        for line, flags in zip(lines, flagged, strict=True)
    )
