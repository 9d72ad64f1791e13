"""Recognising text in evidence that reads like an instruction.

Content of logs, specifications and reports is data. A line that addresses an assistant, names a
tool, imitates a chat role or claims an approval is flagged so that people and choosers see it for
what it is; the flag never changes what is permitted (the guard decides that, not the text).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

INSTRUCTION_LIKE = "instruction_like_text"

# Zero-width and bidi-control characters that can hide words from a pattern.
_INVISIBLE = dict.fromkeys(
    [
        0x00AD,
        0x180E,
        0xFEFF,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2065),
        *range(0x2066, 0x206A),
    ]
)

_PATTERNS = re.compile(
    "|".join(
        [
            r"\b(ignore|disregard|forget|override)\b.{0,60}\b(instructions?|prompts?|rules|guidance|above|previous)\b",
            r"\b(you are now|you must now|act as|new instructions?|system prompt|developer message)\b",
            r"\bnote to (the )?(ai|assistant|agent|model|llm|bot)\b",
            # At a line's start or after a space: tools quote record text (a name, a message) mid-line.
            r"(?:^|\s)\W{0,3}(system|assistant|developer|tool)\s*[:>]",
            r"\b(readspec|searchlogs|getrunhistory|stasummary|stapaths|stapath|stadiff)\b",
            r"\btool_calls\b|\"kind\"\s*:\s*\"(stop|ask_user)\"",
            r"\b(approval|permission|authori[sz]ation)\b.{0,30}\b(granted|approved|given)\b",
            r"<\|im_(start|end)\|>|\[/?inst\]|</?(system|assistant)>|</?tool_(call|result)\b",
            r"\b(real|true|actual) answer\b|\broot cause\b\s*(is|:)|\bthis is proven\b",
            r"\b(raise|increase|set|extend)\b.{0,40}\b(budgets?|limits?)\b",
            r"\bswitch(ing)? to (another |the )?scenario\b|\bstop now\b|\bwithout asking\b",
            r"\brepeat\b.{0,40}\bforever\b|/etc/(passwd|shadow)\b|\bthe guard\b",
            r"\bread (it|this|that) (first|before|now)\b|\bbefore anything else\b",
        ]
    ),
    re.IGNORECASE,
)


_TRIGGERS = re.compile(
    "|".join(
        re.escape(word)
        for word in (
            "ignore", "disregard", "forget", "override", "you are now", "you must now", "act as",
            "instruction", "system", "prompt", "developer", "note to", "assistant", "tool",
            "readspec", "searchlogs", "getrunhistory", "stasummary", "stapath", "stadiff", "kind",
            "approv", "permission", "authori", "im_start", "im_end", "inst]", "answer",
            "root cause", "proven", "budget", "limit", "scenario", "stop now", "without asking",
            "forever", "/etc/", "guard", "read it", "read this", "read that", "before anything",
        )
    )
)  # fmt: skip
"""A word every pattern above needs (lower case): ASCII text without any of them cannot match,
so most lines of a log skip the patterns' case-insensitive alternation."""


# Cyrillic and Greek letters that render like Latin ones (a subset of Unicode's confusables).
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧοναι",
    "aeopcyxijsdhlABEKMHOPCTXIJSABEZHIKMNOPTYXovai",
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def normalise(text: str) -> str:
    """Fold compatibility forms (NFKC) and look-alike letters; drop invisible characters."""
    if text.isascii():
        return text  # NFKC leaves ASCII as it is, and every character translated below is not
    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES)


def instruction_flags(text: str) -> tuple[str, ...]:
    """`(INSTRUCTION_LIKE,)` when the text reads like an instruction to an agent, else `()`.

    Base64 runs are decoded and read too, since a model can decode them.
    """
    folded = normalise(text)
    candidates = [folded, *(_decoded(blob) for blob in _BASE64.findall(folded))]
    return (INSTRUCTION_LIKE,) if any(map(_reads_like_instruction, candidates)) else ()


def _reads_like_instruction(text: str) -> bool:
    if text.isascii() and not _TRIGGERS.search(text.lower()):
        return False  # outside ASCII, case-insensitive matching is Unicode's: no shortcut
    return _PATTERNS.search(text) is not None


def _decoded(blob: str) -> str:
    try:
        return base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode(
            "utf-8", "replace"
        )
    except (binascii.Error, ValueError):
        return ""
