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

MASK = re.compile(r"█+|\[redacted(?::([a-z0-9_-]{1,32}))?\]")
NUMBER = re.compile(r"[-+]?\d+(?:[.,:]\d+)*")
"""A number as a mask may not cut it: `1.5`, `-0.25`, `12:30:45` are each one."""


def narrowing_problem(
    original: str, narrowed: str, labels: frozenset[str] = frozenset()
) -> str | None:
    """None if `narrowed` is `original` with stretches masked; else what it changed. A mask's
    label must be one of `labels` (those the scenario's redactions declare): a label is words."""
    for mask in MASK.finditer(narrowed):
        if mask[1] is not None and mask[1] not in labels:
            return f"a mask's label {mask[1]!r} is not one the scenario declares"
        if (
            narrowed[mask.start() - 1 : mask.start()].isdigit()
            and narrowed[mask.end() : mask.end() + 1].isdigit()
        ):
            return f"a mask between two digits at character {mask.start()} would read as one number"
    pieces = MASK.split(narrowed)[::2]  # without the labels the split also returns
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
    numbers = [number.span() for number in NUMBER.finditer(original)]
    for boundary in (edge for span in spans for edge in span):
        if any(start < boundary < stop for start, stop in numbers):
            return f"a mask cuts a number at character {boundary}"
    return None


def lines_problem(
    original: Sequence[tuple[int, str]],
    narrowed: Sequence[tuple[int, str]],
    labels: frozenset[str] = frozenset(),
) -> str | None:
    """None if `narrowed` keeps some of the original lines, in their order (a receipt's order is
    not always by number: worst first, before and after), each narrowed."""
    position = 0
    for number, text in narrowed:
        while position < len(original) and original[position][0] != number:
            position += 1
        if position == len(original):
            return f"line {number} is not the receipt's next line (lines are only dropped)"
        if problem := narrowing_problem(original[position][1], text, labels):
            return f"line {number}: {problem}"
        position += 1
    return None


def _changed(original: str, narrowed: str) -> str:
    at = next(
        (index for index, (a, b) in enumerate(zip(original, narrowed, strict=False)) if a != b),
        min(len(original), len(narrowed)),
    )
    return f"it differs from the receipt at character {at} beyond what masks stand for"
