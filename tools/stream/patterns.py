"""What a search looks for, compiled once for Hyperscan: a fixed string or a regular expression.

Hyperscan runs in time linear in the text whatever the pattern (no backtracking: `(a+)+$` on a
long line costs what a literal does), and refuses at compile time what it cannot run that way
(back-references, lookaround). Patterns are matched grep-style, one line at a time: `^` and `$`
are line anchors (multi-line mode), `.` is one byte (no UTF-8 mode: a log may hold any bytes), and
a pattern that matches an empty string is refused (every line would match). A database is
compiled once per pattern; scratch space is per thread, as Hyperscan requires.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple, cast

import hyperscan

EMPTY_PROBES = (b"", b"\n", b"a", b"ab", b" a\n")
"""Texts on which a pattern that can match an empty string matches at offset 0 (`^`, `$`, `\\b`,
`^$`, `a|$`): a match of at least one byte cannot end there."""

MAX_SCRATCHES = 128
"""Scratch spaces a thread keeps (one per database it scanned with), before it starts afresh."""

_scratches = threading.local()


class Pattern(NamedTuple):
    text: str
    regex: bool = False


class PatternError(ValueError):
    """A pattern Hyperscan cannot run in linear time, or one that matches an empty string."""


@lru_cache(maxsize=64)
def compiled(pattern: Pattern) -> hyperscan.Database:
    """The pattern's block-mode database, shared by threads (each scans with its own scratch)."""
    database = _compile(pattern, hyperscan.HS_MODE_BLOCK)
    if pattern.regex and any(0 in match_ends(database, probe) for probe in EMPTY_PROBES):
        raise PatternError("it can match an empty string (every line would match)")
    return database


def _compile(pattern: Pattern, mode: int) -> hyperscan.Database:
    """A fixed string through the literal compiler, a regex with `^`/`$` as line anchors."""
    database = hyperscan.Database(mode=mode)
    try:
        database.compile(
            expressions=[pattern.text.encode("utf-8", "surrogateescape")],
            ids=[0],
            elements=1,
            flags=hyperscan.HS_FLAG_MULTILINE if pattern.regex else 0,
            literal=not pattern.regex,
        )
    except hyperscan.error as error:
        raise PatternError(_reason(str(error))) from None
    return database


def _reason(message: str) -> str:
    if "empty buffer" in message:
        return "it can match an empty string (every line would match)"
    return message.rstrip(".")


def scratch(database: hyperscan.Database) -> hyperscan.Scratch:
    """This thread's scratch space for the database."""
    held: dict[int, tuple[hyperscan.Database, hyperscan.Scratch]] = _scratches.__dict__.setdefault(
        "held", {}
    )
    found = held.get(id(database))
    if found is None or found[0] is not database:
        if len(held) >= MAX_SCRATCHES:
            held.clear()
        found = held[id(database)] = (database, hyperscan.Scratch(database))
    return found[1]


def _buffer(data: bytes | bytearray | memoryview) -> bytes:
    """The extension scans any buffer in place (a window of a reused bytearray, no copy); its
    stubs say `bytes`."""
    return cast(bytes, data)


def match_ends(database: hyperscan.Database, data: bytes | bytearray | memoryview) -> list[int]:
    """Every offset at which a match ends, in order (a pattern reports each end once)."""
    ends: list[int] = []

    def ended(ident: int, start: int, end: int, flags: int, context: object) -> None:
        ends.append(end)

    database.scan(_buffer(data), match_event_handler=ended, scratch=scratch(database))
    return ends


def matches_anywhere(database: hyperscan.Database, data: bytes | bytearray | memoryview) -> bool:
    """Whether the pattern matches somewhere in `data` (the scan stops at the first match)."""

    def found(ident: int, start: int, end: int, flags: int, context: object) -> bool:
        return True  # stop

    try:
        database.scan(_buffer(data), match_event_handler=found, scratch=scratch(database))
    except hyperscan.ScanTerminated:
        return True
    return False


Handler = Callable[[int, int, int, int, object], None]


class LineStream:
    """A Hyperscan stream over the pieces of one line: a match found across pieces, `^` and
    `$` only at the line's ends. It holds what the binding does not keep alive (its database and
    handler), and its database is this thread's own: the binding's `close` scans with its
    database's scratch and cannot be given another."""

    def __init__(self, pattern: Pattern, report: Handler) -> None:
        self.database = _stream_database(pattern)
        self.report = report
        self.stream = self.database.stream(match_event_handler=report)
        self.stream.__enter__()  # opens it: the pieces come over several calls
        self.space = scratch(self.database)

    def scan(self, data: memoryview) -> None:
        self.stream.scan(_buffer(data), scratch=self.space, match_event_handler=self.report)

    def close(self) -> None:
        """What matches at the line's end (`$`) is reported."""
        self.stream.close(match_event_handler=self.report)


def _stream_database(pattern: Pattern) -> hyperscan.Database:
    held: dict[Pattern, hyperscan.Database] = _scratches.__dict__.setdefault("streams", {})
    database = held.get(pattern)
    if database is None:
        if len(held) >= MAX_SCRATCHES:
            held.clear()
        database = held[pattern] = _compile(pattern, hyperscan.HS_MODE_STREAM)
    return database


def runnable(query: str, regex: object, tool: str) -> str:
    """`query` as a tool's argument model takes it: with `regex` true, compiled here, so that a
    pattern it cannot run is refused (naming why) before any call; a fixed string as it is."""
    if regex is True:
        try:
            compiled(Pattern(query, regex=True))
        except PatternError as error:
            raise ValueError(f"not a regular expression {tool} can run: {error}") from None
    return query
