"""Recognising text in evidence that reads like an instruction.

Content of logs, specifications and reports is data. A line that addresses an assistant, names a
tool, imitates a chat role or claims an approval is flagged so that people and choosers see it for
what it is; the flag never changes what is permitted (the guard decides that, not the text).
"""

from __future__ import annotations

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
            r"^\W{0,3}(system|assistant|developer|tool)\s*[:>]",
            r"\b(readspec|searchlogs|getrunhistory|stasummary|stapaths|stapath|stadiff)\b",
            r"\btool_calls\b|\"kind\"\s*:\s*\"(stop|ask_user)\"",
            r"\b(approval|permission|authori[sz]ation)\b.{0,30}\b(granted|approved|given)\b",
            r"<\|im_(start|end)\|>|\[/?inst\]|</?(system|assistant)>",
        ]
    ),
    re.IGNORECASE,
)


def normalise(text: str) -> str:
    """Fold look-alike characters (NFKC) and drop invisible ones before matching."""
    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE)


def instruction_flags(text: str) -> tuple[str, ...]:
    """`(INSTRUCTION_LIKE,)` when the text reads like an instruction to an agent, else `()`."""
    return (INSTRUCTION_LIKE,) if _PATTERNS.search(normalise(text)) else ()
