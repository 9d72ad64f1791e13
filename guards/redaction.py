"""Built-in post-call hooks: secrets, e-mail addresses, IP addresses and a manifest's own
`[[redact]]` patterns masked as `[redacted:<label>]` in what the model is shown.

Patterns run on RE2 (linear time whatever the pattern; spans, unlike Hyperscan's default mode).
A span that begins or ends inside a number is widened to the whole number, so that no mask leaves
a different number beside it. They are hooks like any other: their projections are checked by
`guards.narrowing` before the model sees them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import re2

from guards.hookapi import Projection, ReceiptView
from scenario.hookspec import RedactEntry

_HEX = "[0-9A-Fa-f]{1,4}"
BUILTINS: dict[str, tuple[tuple[str, str], ...]] = {
    "secrets": (
        ("aws-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        ("api-key", r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),
        ("slack-token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
        ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        (
            "secret",
            r"(?i)\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)\s*[:=]\s*[^\s'\"]+",
        ),
    ),
    "emails": (
        ("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    ),
    "ips": (
        (
            "ip",
            r"\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\b",
        ),
        ("ip", rf"\b(?:{_HEX}:){{7}}{_HEX}\b"),
        (
            "ip",
            rf"\b{_HEX}(?::{_HEX}){{0,6}}::(?:{_HEX}(?::{_HEX}){{0,6}})?|(?:^|[^0-9A-Za-z:])::{_HEX}(?::{_HEX}){{0,6}}",
        ),
    ),
}


def mask_labels(redact: Sequence[RedactEntry]) -> frozenset[str]:
    """The labels a mask may carry: the builtins' and the scenario's `[[redact]]` tables'."""
    return frozenset(label for patterns in BUILTINS.values() for label, _ in patterns) | {
        entry.label for entry in redact
    }


class RedactError(ValueError):
    """A `[[redact]]` pattern RE2 cannot compile; the message names it."""


def builtin_hook(name: str, redact: Sequence[RedactEntry] = ()) -> Callable[..., object]:
    """The post-call hook of a builtin: the receipt with its matches masked."""
    patterns = (
        tuple((entry.label, entry.pattern) for entry in redact)
        if name == "patterns"
        else BUILTINS[name]
    )
    compiled = _compiled(patterns)

    def mask_receipt(receipt: ReceiptView) -> Projection:
        return Projection(
            masked(receipt.summary, compiled),
            tuple((number, masked(text, compiled)) for number, text in receipt.lines),
        )

    return mask_receipt


@cache
def _compiled(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, Any], ...]:
    found = []
    for label, pattern in patterns:
        try:
            found.append((label, re2.compile(pattern)))
        except re2.error as exc:
            raise RedactError(f"redact pattern {pattern!r} is not RE2 syntax: {exc}") from None
    return tuple(found)


def masked(text: str, patterns: Sequence[tuple[str, Any]]) -> str:
    """`text` with every match replaced by `[redacted:<label>]` (overlapping matches merged)."""
    spans = sorted(
        (_widened(text, *match.span()), label)
        for label, pattern in patterns
        for match in pattern.finditer(text)
        if match.end() > match.start()
    )
    if not spans:
        return text
    pieces, position = [], 0
    for (start, end), label in spans:
        if end <= position:
            continue
        start = max(start, position)
        pieces += [text[position:start], f"[redacted:{label}]"]
        position = end
    return "".join(pieces) + text[position:]


def _widened(text: str, start: int, end: int) -> tuple[int, int]:
    """The span grown over the digits of a number it begins or ends inside."""
    while 0 < start < len(text) and text[start - 1].isdigit() and text[start].isdigit():
        start -= 1
    while 0 < end < len(text) and text[end - 1].isdigit() and text[end].isdigit():
        end += 1
    return start, end
