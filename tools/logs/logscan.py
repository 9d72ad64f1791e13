"""The stream scan behind `searchlogs`: matching lines, their count to the end, and context.

The log is read ahead in chunks (`tools.stream.readahead`); each chunk with the unfinished line carried
from the one before is a window of whole lines, scanned by Hyperscan in one call
(`tools.stream.patterns`). A match is a line's (grep's semantics, one line at a time): each reported end
is taken to the line it ends on, a line counts once, and for a regular expression the line is
checked again alone (a match across a newline is not the line's). Line numbers come from each
chunk's newline count (made on the reading thread) and, inside a window, only up to a hit.

A line that does not end within the chunk it starts in and the reserve is a long line: its
pieces go through a Hyperscan stream opened at its start and closed at its end, so a match is
found wherever it lies across pieces, `^` and `$` anchor at the line's ends only, and nothing of
the line is held but its last `RECENT_BYTES` (for the hit's window). It counts once.
Memory is bounded by the buffers, the hits kept and their context, whatever the log's size.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import hyperscan

from tools.excerpt import BEFORE_HIT_BYTES, SHOWN_BYTES, Line, hit_window, make_part_line
from tools.stream.lines import count_newlines, nth_newline_end
from tools.stream.patterns import LineStream, Pattern, compiled, match_ends, matches_anywhere
from tools.stream.readahead import CHUNK_BYTES, RESERVE_BYTES, read_ahead

RECENT_BYTES = 2048
"""Of a long line, the last bytes kept from the pieces before: a hit's window reaches back
`BEFORE_HIT_BYTES` before the hit's start, at most 800 bytes (a 200-character query) before its
end."""
MAX_SHOWN_LINES = 400
"""Hits and context lines returned at most (hits first: context stops here)."""


@dataclass(frozen=True)
class Search:
    pattern: Pattern
    limit: int
    count: bool = True
    """Count the matching lines to the end, beyond the ones shown."""
    after_line: int = 0
    """Only lines after this one."""
    context: int = 0
    """Lines shown before and after each hit."""


@dataclass(frozen=True)
class Sizes:
    """The read and scan sizes (tests make them tiny, so that every boundary is crossed)."""

    chunk: int = CHUNK_BYTES
    reserve: int = RESERVE_BYTES
    """Room for the line carried into the next chunk; a longer one is a long line."""


@dataclass
class Found:
    hits: list[int] = field(default_factory=list)
    """The numbers of the matching lines shown."""
    lines: dict[int, Line] = field(default_factory=dict)
    """The shown lines (hits and their context) by number."""
    matching: int = 0
    """Matching lines seen: all of them when counted to the end."""
    more: bool = False
    """A matching line follows the shown ones."""
    counted: bool = False
    """`matching` is the count to the end of the log."""
    long_lines: int = 0
    """Lines searched as streams, piece by piece (`_LongLine`)."""


DEFAULT_SIZES = Sizes()


def search(stream: io.BufferedIOBase, request: Search, sizes: Sizes = DEFAULT_SIZES) -> Found:
    scan = _Scan(request, compiled(request.pattern), sizes)
    with read_ahead(stream, sizes.chunk, sizes.reserve) as chunks:
        for chunk in chunks:
            if not scan.feed(chunk.buffer, chunk.size, chunk.newlines):
                break
    return scan.found


@dataclass
class _LongLine:
    """The long line being read: its number, its stream and the match ends it reported, its
    bytes so far and the last of them; and its hit's window: the bytes shown, from `before`, up
    to `wanted` (they may run into the next piece)."""

    number: int
    stream: LineStream
    ends: list[int]
    length: int = 0
    recent: bytes = b""
    matched: bool = False
    shown: bytes = b""
    before: int = 0
    wanted: int = 0

    def extend(self, piece: memoryview) -> None:
        """The bytes of the hit's window that this piece (from `length` in the line) holds."""
        have = self.before + len(self.shown)
        if self.shown and have < self.wanted:
            self.shown += bytes(piece[have - self.length : self.wanted - self.length])

    def advance(self, piece: memoryview) -> None:
        self.length += len(piece)
        if len(piece) >= RECENT_BYTES:
            self.recent = bytes(piece[-RECENT_BYTES:])
        else:
            self.recent = (self.recent + bytes(piece))[-RECENT_BYTES:]


class _Scan:
    """Windows of whole lines in order; the state between them (line number, carried bytes, an
    open long line, context owed to the last hit, the last lines for the next hit's context)."""

    def __init__(self, request: Search, database: hyperscan.Database, sizes: Sizes) -> None:
        self.request = request
        self.sizes = sizes
        self.database = database
        self.found = Found()
        self.line = 1
        """The number of the line that starts the next window."""
        self.carry = b""
        self.long: _LongLine | None = None
        self.owed = 0
        """Context lines still owed after the last hit."""
        self.tail: list[Line] = []
        """The last `context` lines before the next window, for a hit at its start."""

    @property
    def showing(self) -> bool:
        return len(self.found.hits) < self.request.limit

    def feed(self, buffer: bytearray, size: int, newlines: int) -> bool:
        """One chunk (its bytes after the reserve); False once nothing more is needed."""
        reserve = self.sizes.reserve
        start = reserve - len(self.carry)
        buffer[start:reserve] = self.carry
        end = reserve + size
        view = memoryview(buffer)
        if not size:  # the end: a last line without a newline
            self.found.counted = self.request.count
            if end > start:
                self._window(view[start:end], buffer, start, 0)
            elif self.long is not None:
                self._search_long(self.long, view[start:start], last=True)
                self._end_long()
            return False
        cut = buffer.rfind(b"\n", start, end) + 1
        if cut:
            self._window(view[start:cut], buffer, start, newlines)
            self.carry = bytes(view[cut:end])
            if len(self.carry) > reserve:
                self._long_piece(view[cut:end])
        elif self.long is not None or end - start > reserve:
            self._long_piece(view[start:end])
        else:
            self.carry = bytes(view[start:end])
        return self.request.count or self.showing or self.owed > 0 or not self.found.more

    # Whole lines.

    def _window(self, window: memoryview, buffer: bytearray, origin: int, newlines: int) -> None:
        """Lines from `origin` in `buffer`; the first may end an open long line."""
        first = self.line
        position = 0
        if self.long is not None:
            position = self._finish_long(window, buffer, origin)
        if self.owed:
            self._pay_context(
                window, buffer, origin, position, first + count_newlines(window[:position])
            )
        skip = self._skip_to(window, position)
        if skip is not None:
            self._matches(window, buffer, origin, skip)
        self.line = first + newlines
        if self.request.context and (self.showing or self.owed):
            self._keep_tail(buffer, origin, origin + len(window))

    def _skip_to(self, window: memoryview, position: int) -> int | None:
        """Where matching starts in the window: past `after_line` (None: not in this window)."""
        wanted = self.request.after_line
        if wanted < self.line:
            return position
        skipped = nth_newline_end(window, wanted - self.line + 1)
        if skipped is None:
            return None
        return max(position, skipped)

    def _matches(self, window: memoryview, buffer: bytearray, origin: int, start: int) -> None:
        ends = match_ends(self.database, window[start:] if start else window)
        decided = -1
        line, counted_to = self.line, 0
        regex = self.request.pattern.regex
        for end in ends:
            end += start
            if end <= decided:
                continue
            line_start = max(buffer.rfind(b"\n", origin, origin + end - 1) + 1 - origin, 0)
            line_end = _line_end(buffer, origin, len(window), end - 1)
            decided = line_end + 1
            if regex and not matches_anywhere(self.database, window[line_start:line_end]):
                continue
            self.found.matching += 1
            if not self.showing:
                self.found.more = True
                if not self.request.count:
                    return
                continue
            line += count_newlines(window[counted_to:line_start])
            counted_to = line_start
            self._show_hit(line, window, buffer, origin, line_start, line_end, end)

    def _show_hit(
        self,
        number: int,
        window: memoryview,
        buffer: bytearray,
        origin: int,
        line_start: int,
        line_end: int,
        end: int,
    ) -> None:
        length = line_end - line_start
        hit_end = end - line_start
        hit = max(hit_end - self._hit_length(), 0)
        lo, hi = hit_window(length, hit, min(hit_end, length))
        shown = bytes(window[line_start + lo : line_start + hi])
        self.found.hits.append(number)
        self.found.lines[number] = make_part_line(number, shown, lo, length - hi)
        if self.request.context:
            self._before_context(number, buffer, origin, line_start)
            self.owed = self.request.context
            self._pay_context(window, buffer, origin, line_end + 1, number + 1)

    def _hit_length(self) -> int:
        """The bytes of a hit before its end, as far as known (a regex's start is not sought)."""
        return 0 if self.request.pattern.regex else len(self.request.pattern.text.encode())

    # Context.

    def _before_context(self, number: int, buffer: bytearray, origin: int, line_start: int) -> None:
        """Context before a hit: from its window, and from the lines kept of the windows before."""
        wanted = self.request.context
        spans = _lines_back(buffer, origin, origin + line_start - 1, wanted)
        lines = [
            _context_line(number - 1 - index, buffer[begin:stop])
            for index, (begin, stop) in enumerate(spans)
        ]
        if len(lines) < wanted:
            first = number - len(lines)
            lines += [line for line in reversed(self.tail) if line.number < first][
                : wanted - len(lines)
            ]
        for line in lines:
            self._show_context(line)

    def _pay_context(
        self, window: memoryview, buffer: bytearray, origin: int, position: int, number: int
    ) -> None:
        """Context lines owed after the last hit: line `number` starts at `position`."""
        while self.owed and position < len(window):
            stop = _line_end(buffer, origin, len(window), position)
            self._show_context(_context_line(number, window[position:stop]))
            number, position, self.owed = number + 1, stop + 1, self.owed - 1

    def _show_context(self, line: Line) -> None:
        found = self.found.lines
        if len(found) < MAX_SHOWN_LINES and line.number not in found and line.number >= 1:
            found[line.number] = line

    def _keep_tail(self, buffer: bytearray, origin: int, end: int) -> None:
        """The last `context` lines so far (the window's, then the windows' before)."""
        wanted = self.request.context
        spans = _lines_back(buffer, origin, end - 1, wanted)  # from the window's last newline
        lines = [
            _context_line(self.line - 1 - index, buffer[begin:stop])
            for index, (begin, stop) in enumerate(spans)
        ]
        missing = wanted - len(lines)
        self.tail = (self.tail[-missing:] if missing else []) + lines[::-1]

    # Long lines.

    def _long_piece(self, piece: memoryview) -> None:
        """A piece of a long line (the first opens its stream)."""
        if self.long is None:
            self.long = self._open_long()
        self._search_long(self.long, piece)
        self.carry = b""

    def _open_long(self) -> _LongLine:
        self.found.long_lines += 1
        ends: list[int] = []

        def report(ident: int, start: int, end: int, flags: int, context: object) -> None:
            ends.append(end)

        return _LongLine(self.line, LineStream(self.request.pattern, report), ends)

    def _search_long(self, long: _LongLine, piece: memoryview, last: bool = False) -> None:
        """Scan a piece of the long line; `last`: the line ends with it (its stream closes)."""
        long.extend(piece)
        if not long.matched:
            long.stream.scan(piece)
        if last:
            long.stream.close()
        if not long.matched and long.ends and long.number > self.request.after_line:
            self._long_hit(long, piece, long.ends[0])
        long.advance(piece)

    def _long_hit(self, long: _LongLine, piece: memoryview, hit_end: int) -> None:
        long.matched = True
        self.found.matching += 1
        if not self.showing:
            self.found.more = True
            return
        hit = max(hit_end - self._hit_length(), 0)
        lo = 0 if hit_end <= SHOWN_BYTES else hit - BEFORE_HIT_BYTES
        long.wanted = max(lo + SHOWN_BYTES, hit_end)
        known = long.recent + bytes(piece[: long.wanted - long.length])
        origin = long.length - len(long.recent)  # where `known` starts in the line
        long.before = max(lo, origin)
        long.shown = known[long.before - origin : long.wanted - origin]
        self.found.hits.append(long.number)

    def _finish_long(self, window: memoryview, buffer: bytearray, origin: int) -> int:
        """The open long line ends at the window's first newline: its last piece is searched and
        its stream closed (where `$` matches at its end); where the next line starts."""
        stop = _line_end(buffer, origin, len(window), 0)
        long = self.long
        assert long is not None
        self._search_long(long, window[:stop], last=True)
        self._end_long()
        return stop + 1

    def _end_long(self) -> None:
        long, self.long = self.long, None
        if long is None or not long.shown:
            return
        shown = long.shown[: max(long.length - long.before, 0)]
        self.found.lines[long.number] = make_part_line(
            long.number, shown, long.before, long.length - long.before - len(shown)
        )
        self.owed = self.request.context


def _line_end(buffer: bytearray, origin: int, size: int, position: int) -> int:
    """Where the line holding `position` of the window (`size` bytes from `origin`) ends: its
    newline's position, or the window's end."""
    newline = buffer.find(b"\n", origin + position, origin + size)
    return newline - origin if newline != -1 else size


def _lines_back(buffer: bytearray, origin: int, stop: int, count: int) -> list[tuple[int, int]]:
    """The spans of up to `count` lines that end before `stop` (a newline's position), the last
    first, none starting before `origin`."""
    spans: list[tuple[int, int]] = []
    while len(spans) < count and stop >= origin:
        begin = buffer.rfind(b"\n", origin, stop) + 1 or origin
        spans.append((begin, stop))
        stop = begin - 1
    return spans


def _context_line(number: int, raw: memoryview | bytearray) -> Line:
    """A context line, shown from its start for at most `SHOWN_BYTES`."""
    return make_part_line(number, bytes(raw[:SHOWN_BYTES]), 0, max(len(raw) - SHOWN_BYTES, 0))
