"""Bounded, line-numbered excerpts: the only shape in which tools return content."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from contract.strict import FrozenModel
from contract.text import storable_text
from tools.flags import INSTRUCTION_LIKE, instruction_flags, instruction_spans

MAX_LINE_CHARS = 400
"""Longer lines are clipped; the excerpt says how many characters were left out."""
UNDECODABLE = "undecodable_bytes"


class Line(FrozenModel):
    """One line of a record, with its 1-based number in the record."""

    number: int
    text: str
    flags: tuple[str, ...] = ()


class Excerpt(FrozenModel):
    """What a tool returns: a one-line summary and bounded lines quoted from one record."""

    summary: str
    lines: tuple[Line, ...]
    truncated: bool
    """More matched or belonged to the section than is shown."""
    unknowns: tuple[str, ...] = ()
    """What this reading could not tell, each in one line (a family's members with no verdict or
    not read, buckets counted and not shown): the handover lists them as the item's unknowns."""
    computed: dict[str, Any] | None = None
    """An analysis's result (`tools/analysis/`): its query, columns, first rows and row count.
    Computed, never a value a source states."""
    report: dict[str, Any] | None = None
    """A triage's morning report (`tools/logs/morning.py`): every test's row, every bucket. The
    receipt keeps it in the store as a body, apart from the bounded summary and lines."""

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
    escaped = storable_text(text)  # a NUL or a lone surrogate shown escaped: every store keeps it
    if escaped != text:
        text, flags = escaped, flags or (UNDECODABLE,)
    flags = instruction_flags(text) + flags
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [+{len(text) - MAX_LINE_CHARS} chars]"
    return Line(number=number, text=text, flags=flags)


def quoted_member(text: str, number: int) -> str:
    """The member a family tool's excerpt line quotes, or "": the family tools number each line
    with its line in its member and write it `member:846: text` (`searchfamily`), after the
    bucket's label in triage's (`B1 member:846: text`)."""
    found = re.match(rf"(?:B[0-9]+ )?(.+?):{number}: ", text)
    return found[1] if found else ""


SHOWN_BYTES = 360
"""Of a longer line, a hit is shown with this many bytes around it (a shorter line is whole)."""
BEFORE_HIT_BYTES = 120
"""Of those, the bytes before a hit that lies past a long line's first `SHOWN_BYTES`."""


def hit_window(length: int, hit: int, hit_end: int) -> tuple[int, int]:
    """The stretch `[lo, hi)` of a line of `length` bytes shown for a hit at `[hit, hit_end)`:
    the whole of a short line; of a long one, its start when the hit lies in its first
    `SHOWN_BYTES`, else from `BEFORE_HIT_BYTES` before the hit; `SHOWN_BYTES`, or to the hit's end."""
    if length <= SHOWN_BYTES:
        return 0, length
    lo = 0 if hit_end <= SHOWN_BYTES else hit - BEFORE_HIT_BYTES
    return lo, min(length, max(lo + SHOWN_BYTES, hit_end))


def make_part_line(number: int, shown: bytes, before: int, after: int) -> Line:
    """A line shown in part: the bytes left out on each side are counted in the text, and a
    character cut by the window is left out whole (it would read as an undecodable byte)."""
    lead = _continuation_bytes(shown) if before else 0
    cut = _incomplete_tail(shown[lead:]) if after else 0
    before, after = before + lead, after + cut
    head = f"[{before} bytes] … ".encode() if before else b""
    tail = f" … [+{after} bytes]".encode() if after else b""
    return make_line(number, head + shown[lead : len(shown) - cut] + tail)


def _continuation_bytes(data: bytes) -> int:
    """UTF-8 continuation bytes at the start of `data` (the rest of a cut character)."""
    count = 0
    while count < min(3, len(data)) and 0x80 <= data[count] < 0xC0:
        count += 1
    return count


def _incomplete_tail(data: bytes) -> int:
    """Bytes at the end of `data` that begin a UTF-8 character they do not finish."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return 0
        if byte >= 0xC0:
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return back if needed > back else 0
    return 0


def make_excerpt(
    summary: str, lines: Iterable[Line], truncated: bool, unknowns: Iterable[str] = ()
) -> Excerpt:
    return Excerpt(
        summary=summary,
        lines=flag_split_instructions(list(lines)),
        truncated=truncated,
        unknowns=tuple(unknowns),
    )


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
    """Flag the lines of an instruction that reads like one only when consecutive lines are
    joined (a split injection): the lines that carry it, never the others of the window."""
    flagged = [set(line.flags) for line in lines]
    for start in range(len(lines)):
        run = lines[start : start + window]
        if len(run) < 2 or any(b.number != a.number + 1 for a, b in pairwise(run)):
            continue
        texts = [line.text for line in run]
        for parts in (texts, _messages(run)):
            if not instruction_flags(" ".join(parts), structure=False):
                continue
            for first, last in instruction_spans(parts):
                for offset in range(first, _sentence_end(texts, last) + 1):
                    flagged[start + offset].add(INSTRUCTION_LIKE)
    return tuple(
        line
        if set(line.flags) == flags
        else line.model_copy(update={"flags": tuple(sorted(flags))})
        for line, flags in zip(lines, flagged, strict=True)
    )


_OPEN_END = re.compile(r"[\w,:]\s*$")
"""A line cut mid-sentence ends with a word, a comma or a colon (not a period, a tag, a bracket)."""
_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*\s*$")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*[,:;.!?\"'”’)]*")
"""A word of prose (not a log field such as `UVM_INFO`, `#`, `0.00` or a path)."""


def _sentence_end(texts: list[str], last: int) -> int:
    """The last line of the sentence an instruction ending on line `last` goes on with. After the
    prefix (log fields, table columns) a line shares with the next, line `last` must hold prose
    that ends mid-sentence, and each next line must go on with it in lower case; they count as far
    as the last that ends a sentence. A log line beside an injected one has its own prefix, or
    ends no sentence: it stays out."""
    if last + 1 >= len(texts) or not _WORD.fullmatch(
        _after_shared_prefix(texts[last + 1], texts[last]).split(" ")[0]
    ):
        return last
    end = last
    for index in range(last + 1, len(texts)):
        rest = _after_shared_prefix(texts[index - 1], texts[index])
        if not _OPEN_END.search(texts[index - 1]) or not rest[:1].islower():
            break
        if _SENTENCE_END.search(texts[index]):
            end = index
    return end


def _after_shared_prefix(before: str, text: str) -> str:
    """`text` after the leading tokens it shares with `before`: the message, after a log or table
    prefix (numbers without letters, such as times and columns, are alike)."""
    tokens = text.split()
    shared = 0
    for mine, theirs in zip(tokens, before.split(), strict=False):
        if _shape(mine) != _shape(theirs):
            break
        shared += 1
    return " ".join(tokens[shared:])


def _shape(token: str) -> str:
    if any(char.isalpha() for char in token) or not any(char.isdigit() for char in token):
        return token
    return "0"
