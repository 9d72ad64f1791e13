"""The check that a post-call hook only narrowed what the model sees, never rewrote it.

A narrowed text is the original with stretches of it replaced by masks: a run of `█`, or
`[redacted]` / `[redacted:label]`, each standing for at least one character. Everything else must
be the original's characters, in order and contiguous between masks. A mask may not begin or end
inside a number (`1█5` for `125` would read as another number), and lines may only be dropped, never
added, reordered or renumbered. Seed 001 §12: hooks may remove details; they cannot replace a
source, timestamp or amount while keeping its place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MASK = re.compile(r"█+|\[redacted(?::[a-z0-9_-]{1,32})?\]")


def narrowing_problem(original: str, narrowed: str) -> str | None:
    """None if `narrowed` is `original` with stretches masked; else what it changed."""
    pieces = MASK.split(narrowed)
    if len(pieces) == 1:
        return None if narrowed == original else _changed(original, narrowed)
    first, *middle, last = pieces
    if not original.startswith(first):
        return _changed(original, narrowed)
    position = len(first)
    spans: list[tuple[int, int]] = []
    for piece in middle:  # each after a mask of at least one character
        found = original.find(piece, position + 1)
        if found == -1:
            return _changed(original, narrowed)
        spans.append((position, found))
        position = found + len(piece)
    end = len(original) - len(last)
    if end < position + 1 or not original.endswith(last):
        return _changed(original, narrowed)
    spans.append((position, end))
    for start, stop in spans:
        if _cuts_number(original, start) or _cuts_number(original, stop):
            return f"a mask cuts a number at character {start if _cuts_number(original, start) else stop}"  # fmt: skip
    return None


def lines_problem(original: Sequence[tuple[int, str]], narrowed: Sequence[tuple[int, str]]) -> str | None:  # fmt: skip
    """None if `narrowed` keeps some of the original lines, in order, each narrowed."""
    texts = dict(original)
    numbers = [number for number, _ in narrowed]
    if numbers != sorted(set(numbers)):
        return "lines are repeated or out of order"
    for number, text in narrowed:
        if number not in texts:
            return f"line {number} is not a line of the receipt"
        if problem := narrowing_problem(texts[number], text):
            return f"line {number}: {problem}"
    return None


def _cuts_number(text: str, boundary: int) -> bool:
    return 0 < boundary < len(text) and text[boundary - 1].isdigit() and text[boundary].isdigit()


def _changed(original: str, narrowed: str) -> str:
    at = next(
        (index for index, (a, b) in enumerate(zip(original, narrowed, strict=False)) if a != b),
        min(len(original), len(narrowed)),
    )
    return f"it differs from the receipt at character {at} beyond what masks stand for"
