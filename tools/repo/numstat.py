"""Lines added and deleted between two versions of a file, counted as `git diff --numstat` counts
them, without running git.

Lines end at `\n` only, as git's do: a last line without its newline differs from the same line
with one. The lines both versions start and end with are set aside first, found on the bytes
(git's `xdl_trim_ends`), so an edit to a long file costs what its edited middle costs. A line of
the middle the other middle never holds is a change in any alignment and is counted straight away
(git discards such lines too). What is left is measured by the length of its longest common
subsequence, computed a whole row at a time with Python's big integers (Hyyrö's bit-parallel
recurrence, O(n·m/64) word operations): the counts of a minimal diff, however large the edit.

git's diff is minimal too, until its cost heuristics cut in (a rewrite of hundreds of lines among
thousands, lines repeated many times among changed ones), where git may count more than the
minimum: there the two can differ, by git counting more.
"""

from __future__ import annotations

from collections.abc import Sequence

from scenario.reading import check_time

NEWLINE = ord("\n")
TIME_CHECK_EVERY = 1024
"""Lines of the new side between two checks of the call's time."""


def line_counts(old: bytes, new: bytes) -> tuple[int, int]:
    """(added, deleted): lines of `new` not matched in `old`, and lines of `old` not in `new`."""
    if old == new:
        return 0, 0
    start = old.rfind(b"\n", 0, _shared_head(old, new)) + 1  # where the shared whole lines end
    old_rest, new_rest = old[start:], new[start:]
    end = _shared_line_tail(old_rest, new_rest)
    before = _lines(old_rest[: len(old_rest) - end])
    after = _lines(new_rest[: len(new_rest) - end])
    if not before or not after:
        return len(after), len(before)
    in_before, in_after = set(before), set(after)
    kept_before = list(filter(in_after.__contains__, before))
    kept_after = list(filter(in_before.__contains__, after))
    only_added, only_deleted = len(after) - len(kept_after), len(before) - len(kept_before)
    head = _shared_head(kept_before, kept_after)
    kept_before, kept_after = kept_before[head:], kept_after[head:]
    tail = _shared_tail(kept_before, kept_after)
    kept_before = kept_before[: len(kept_before) - tail]
    kept_after = kept_after[: len(kept_after) - tail]
    common = _common_lines(kept_before, kept_after)
    added, deleted = len(kept_after) - common, len(kept_before) - common
    return added + only_added, deleted + only_deleted


def _shared_head(a: Sequence[object], b: Sequence[object]) -> int:
    """How many first items (bytes, or lines) `a` and `b` share: by halving, each slice compared
    once in C, so a long shared run costs no Python step per item."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _shared_tail(a: Sequence[object], b: Sequence[object]) -> int:
    """How many last items `a` and `b` share (as `_shared_head`)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _shared_line_tail(a: bytes, b: bytes) -> int:
    """How many last bytes of `a` and `b` are whole lines both end with."""
    shared = _shared_tail(a, b)
    if all(shared == len(side) or side[len(side) - shared - 1] == NEWLINE for side in (a, b)):
        return shared  # both sides' lines start where the shared bytes start
    first_end = a.find(b"\n", len(a) - shared)
    return 0 if first_end < 0 else len(a) - first_end - 1


def _lines(data: bytes) -> list[bytes]:
    """The lines of `data`, each without its `\\n`; a last line without one keeps a `\\n` added
    at its end, which no other line holds, so it never equals a line that had its newline."""
    lines = data.split(b"\n")
    if lines[-1]:
        lines[-1] += b"\n"
    else:
        lines.pop()
    return lines


def _common_lines(a: list[bytes], b: list[bytes]) -> int:
    """The length of the longest common subsequence of `a` and `b`: the 0 bits of `row` (one bit
    per line of `a`) count the LCS of `a` and the lines of `b` read so far (Hyyrö 2004), one
    big-integer step per line of `b`."""
    if not a or not b:
        return 0
    at: dict[bytes, int] = {}
    for index, line in enumerate(a):
        at[line] = at.get(line, 0) | 1 << index
    full = (1 << len(a)) - 1
    row = full
    for count, line in enumerate(b):
        if count % TIME_CHECK_EVERY == 0:
            check_time()
        matched = row & at.get(line, 0)
        row = ((row + matched) | (row - matched)) & full
    return len(a) - row.bit_count()
