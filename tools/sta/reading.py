"""The reader's account of a report: its length, the stretches no reader here understood, and
the paths whose slack it could not read.

Every tool over a report carries it, so that an answer is never stronger than its reading: a count
over a report some of whose lines were not read is said over the lines read, with the others named
(`unknown: 4530 of 4530 line(s) of this report were not read, at L1–L4530`), never a bare "0 of 0",
and listed among the answer's unknowns for the handover. Every unread line is inside a range said
(never an ellipsis); past `MAX_RANGES` ranges the closest are joined, and the text says over how
many read lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tools.sta.items import Extent, StaPath, Unrecognised
from tools.sta.scan import Row

MAX_RANGES = 40
"""Ranges of unrecognised lines said: past this, the closest ranges are joined, so that every
unrecognised line is still inside one."""
Span = tuple[int, int]


@dataclass
class Reading:
    """What the reader did not read of one report, and the report's length."""

    extent: int = 0
    unrecognised: list[Unrecognised] = field(default_factory=list)

    def add(self, item: object) -> bool:
        """Takes the report's length and its unread stretches; False for any other item."""
        if isinstance(item, Unrecognised):
            self.unrecognised.append(item)
            return True
        if isinstance(item, Extent):
            self.extent = item.lines
            return True
        return False

    @property
    def spans(self) -> list[Span]:
        return joined((item.first, item.last) for item in self.unrecognised)

    @property
    def unread(self) -> int:
        """Lines inside the unread ranges (blank lines between unread ones included)."""
        return sum(last - first + 1 for first, last in self.spans)

    def said(self) -> str:
        """`stasummary`'s account: how many lines were not recognised, where, and how many were
        read; the two add up to the report's length."""
        spans = self.spans
        if not spans:
            return f"; all {self.extent} line(s) read" if self.extent else "; the report is empty"
        unread = self.unread
        blank = unread - sum(item.lines for item in self.unrecognised)
        blanks = f" ({blank} of them blank)" if blank else ""
        return (
            f"; {unread} of {self.extent} line(s) not recognised{blanks}, at {where(spans)}"
            f"; the other {self.extent - unread} line(s) read"
        )

    def unknown(self, whose: str = " of this report") -> str:
        """`unknown: N of M line(s) … were not read, at L…`, or "" when every line was read."""
        spans = self.spans
        if not spans:
            return ""
        return f"{self.unread} of {self.extent} line(s){whose} were not read, at {where(spans)}"


@dataclass
class Unranked:
    """Paths `stapaths` cannot rank, by why: no slack printed, none read, or cut off before it."""

    short: int = 0
    unread_tables: int = 0
    truncated: int = 0

    def add(self, item: Row | StaPath) -> None:
        if isinstance(item, StaPath):
            self.unread_tables += item.table_unread
            self.short += not item.table_unread
        else:
            self.truncated += item.truncated

    def said(self, status: bytes | None) -> str:
        either = " (none can be said MET or VIOLATED)" if status is not None else ""
        parts = [
            f"; {count} {what} not ranked: {why}, so unknown{suffix}"
            for count, what, why, suffix in (
                (self.short, "-format short path(s)", "their slack is not printed", either),
                (
                    self.unread_tables,
                    "path header(s)",
                    "the lines after them were not read",
                    either,
                ),
                (self.truncated, "truncated path(s)", "cut off before their slack", ""),
            )
            if count
        ]
        return "".join(parts)


def over_read(answer: str, readings: Mapping[str, Reading]) -> str:
    """The answer as it stands if every report was read whole; else said over the lines read,
    after the unread lines of each report (named by its side, where there are several)."""
    several = len(readings) > 1
    unknown = [
        f"{side}: {note}" if several else note
        for side, reading in readings.items()
        if (note := reading.unknown(" of the report" if several else " of this report"))
    ]
    if not unknown:
        return answer
    return f"unknown: {'; '.join(unknown)}; over the lines read: {answer}"


def unknowns(readings: Mapping[str, Reading], truncated: bool = False) -> tuple[str, ...]:
    """The answer's unknowns, for the handover: what each report holds in the lines not read
    (and, where the answer shows less than it found, that too: the handover's default note is
    replaced by these)."""
    several = len(readings) > 1
    told = [
        f"what {reading.unread} of {reading.extent} line(s) of the {side + ' ' if several else ''}"
        f"report hold, at {where(reading.spans)}: not read"
        for side, reading in readings.items()
        if reading.spans
    ]
    if told and truncated:
        told.append("more of the answer than the lines shown (the summary counts them)")
    return tuple(told)


def where(spans: list[Span]) -> str:
    """The ranges, at most `MAX_RANGES`, every line inside one; joins said."""
    shown, widened = widened_spans(spans, MAX_RANGES)
    text = ranges(shown)
    if widened:
        text += (
            f" (joined over {widened} read line(s) to stay within {MAX_RANGES} ranges; every "
            "unrecognised line is inside them)"
        )
    return text


def joined(spans: Iterable[Span]) -> list[Span]:
    """Line ranges in order, touching ones joined (`L3–L4, L5` is `L3–L5`)."""
    result: list[Span] = []
    for first, last in sorted(spans):
        if result and first <= result[-1][1] + 1:
            result[-1] = (result[-1][0], max(last, result[-1][1]))
        else:
            result.append((first, last))
    return result


def widened_spans(spans: list[Span], limit: int) -> tuple[list[Span], int]:
    """At most `limit` ranges still holding every line of `spans`: the ranges with the fewest
    lines between them are joined first. Returns them and how many lines the joins took in."""
    if len(spans) <= limit:
        return spans, 0
    gaps = sorted(range(len(spans) - 1), key=lambda at: (spans[at + 1][0] - spans[at][1], at))
    joins = set(gaps[: len(spans) - limit])
    shown = [spans[0]]
    for at, span in enumerate(spans[1:]):
        shown[-1:] = [(shown[-1][0], span[1])] if at in joins else [shown[-1], span]
    return shown, sum(spans[at + 1][0] - spans[at][1] - 1 for at in joins)


def spans_of(numbers: Iterable[int]) -> list[Span]:
    return joined((number, number) for number in numbers)


def ranges(spans: Iterable[Span]) -> str:
    return ", ".join(f"L{first}" if first == last else f"L{first}–L{last}" for first, last in spans)
