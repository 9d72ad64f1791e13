"""searchlogs: the first lines of an approved log that contain a fixed string.

Like `grep -F -m LIMIT -n`: case-sensitive, byte-exact, one hit per line. Memory is bounded by a
fixed window and the kept lines, not by the log's size.

A scan pays for two things, each only where it must. The needle is found through its rarest byte
(`find` of one byte is memchr, not CPython's byte loop over the whole needle). Newlines are counted
only up to a hit, never past the last one. A plain file is read window by window into a reused
buffer, and the stretch up to a hit is re-read (from the page cache) to number it; a
stream (gzip) goes through one reusable buffer whose newlines are counted before it is refilled.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import (
    BEFORE_HIT_BYTES,
    SHOWN_BYTES,
    Excerpt,
    Line,
    hit_window,
    make_excerpt,
    make_part_line,
)
from tools.lines import MAX_LINE_BYTES
from tools.reading import open_record
from tools.records import Record

CHUNK_BYTES = 1 << 20
"""A stream's read size: large enough that Python's per-read cost vanishes."""
SAMPLE_WORK = 1 << 16
"""Bytes counted, over all the needle's distinct bytes, to choose its rarest byte."""
MISS_SPAN = 512
"""Below one false candidate per this many bytes, memchr on the rare byte beats `find(needle)`."""
MAX_CREDIT = 256.0
"""Misses the rare byte may run up in a burst before the whole needle is searched for instead."""


class SearchLogsArgs(ToolArgs):
    path: RecordId
    """The exact id of an approved `log` record."""
    query: SearchText
    """A fixed string, matched case-sensitively."""
    limit: Annotated[int, Field(ge=1, le=200)] = 20
    """How many matching lines to return."""
    count: bool = False
    """Also count every matching line to the end of the log (a second, streamed pass)."""

    @model_serializer(mode="wrap")
    def _count_only_when_asked(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A call's recorded arguments name `count` only when it was asked for: receipts and
        call signatures of plain searches stay as they were."""
        dumped: dict[str, Any] = handler(self)
        if not dumped.get("count"):
            dumped.pop("count", None)
        return dumped


def run(args: SearchLogsArgs, records: Mapping[str, Record]) -> Excerpt:
    needle = args.query.encode("utf-8")
    with open_record(records["path"]) as stream:
        hits, more = find_lines(stream, needle, args.limit)
    if not hits:
        summary = f"no line contains {args.query!r}"
    else:
        summary = f"{len(hits)} line(s) contain {args.query!r}"
        if more:
            summary += f"; more lines match beyond the limit of {args.limit}"
    if more and args.count:
        with open_record(records["path"]) as stream:
            summary += f"; {count_matching_lines(stream, needle)} line(s) in all contain it"
    return make_excerpt(summary, hits, truncated=more)


def count_matching_lines(
    stream: io.BufferedIOBase, needle: bytes, chunk_bytes: int = CHUNK_BYTES
) -> int:
    """How many lines contain `needle`, to the end of the stream, in bounded memory: a line
    longer than a chunk is searched as it goes, keeping only enough of its end for a hit that
    straddles two chunks."""
    total, held, open_hit = 0, b"", False
    keep = len(needle) - 1
    while chunk := stream.read(chunk_bytes):
        data = held + chunk
        end = data.rfind(b"\n") + 1
        if end == 0:  # within one long line
            open_hit = open_hit or needle in data
            held = data[len(data) - keep :] if keep else b""
            continue
        start = 0
        if open_hit:  # the long line ends here, counted once
            total, start, open_hit = total + 1, data.find(b"\n") + 1, False
        total += _lines_with(data, needle, start, end)
        held = data[end:]
    return total + (open_hit or (bool(held) and needle in held))


def _lines_with(data: bytes, needle: bytes, start: int, end: int) -> int:
    """Lines of `data[start:end]` (whole lines) that contain `needle`."""
    count = 0
    found = data.find(needle, start, end)
    while found >= 0:
        count += 1
        line_end = data.find(b"\n", found, end)
        found = data.find(needle, line_end + 1, end)
    return count


def find_lines(stream: io.BufferedIOBase, needle: bytes, limit: int) -> tuple[list[Line], bool]:
    """The first `limit` lines containing `needle`, and whether another one follows.

    A hit's line is shown whole, or for a long line the stretch around the hit, however far into
    the line it lies (`tools.excerpt.hit_window`). Line numbers count from the
    stream's current position.
    """
    return _search_stream(stream, needle, limit)


# A stream: one reusable buffer, newlines counted up to a hit or before the buffer is refilled.


def _search_stream(stream: io.BufferedIOBase, needle: bytes, limit: int) -> tuple[list[Line], bool]:
    """Reads into one buffer (`readinto`, no per-chunk allocation); the incomplete line at the end
    of a chunk moves to the buffer's front before the next read. A line longer than the buffer is
    searched piece by piece; each piece keeps enough of the one before that a hit straddling the
    two is found, and has the bytes shown before it."""
    scan = _StreamScan(needle, limit)
    long_line = max(MAX_LINE_BYTES, SHOWN_BYTES + BEFORE_HIT_BYTES + 2 * len(needle))
    buffer = bytearray(2 * CHUNK_BYTES + long_line)
    window = memoryview(buffer)
    held = 0
    while read := stream.readinto(window[held : held + CHUNK_BYTES]):
        filled = held + read
        end = buffer.rfind(b"\n", 0, filled) + 1
        if end == 0 and filled > long_line:
            searched = filled - SHOWN_BYTES - len(needle)  # a hit found here has its window
            if scan.search(buffer, searched + len(needle) - 1, newline_terminated=False, filled=filled):  # fmt: skip
                return scan.hits, True
            end = searched - BEFORE_HIT_BYTES  # the next piece starts with the bytes before
            scan.carry(end)
        elif end and scan.search(buffer, end):
            return scan.hits, True
        scan.drop(buffer, end)
        held = filled - end
        buffer[:held] = buffer[end:filled]
    if held and scan.search(buffer, held, newline_terminated=False, at_end=True):
        return scan.hits, True
    return scan.hits, False


class _StreamScan:
    """Hits so far, the line count up to `counted` (a buffer position), and the line that runs on.

    When a line is longer than the buffer, the buffer's front is mid-line: `carried` bytes of the
    line came before it, `line_open` says whether the line has a hit already, and `pending` holds
    that hit's line until the line's end says how many bytes follow what it shows.
    """

    def __init__(self, needle: bytes, limit: int) -> None:
        self.needle = needle
        self.limit = limit
        self.finder: _Finder | None = None
        self.hits: list[Line] = []
        self.line = 1
        self.counted = 0
        self.carried = 0
        self.line_open = False
        self.pending: tuple[int, bytes, int, int] | None = None
        """(line number, bytes shown, bytes before them, where they end in the line)."""

    def search(
        self,
        buffer: bytearray,
        end: int,
        newline_terminated: bool = True,
        at_end: bool = False,
        filled: int | None = None,
    ) -> bool:
        """Record hits in `buffer[:end]`; True once a hit beyond the limit is seen. `at_end`: the
        log's last line ends at `end`; `filled`: the buffer holds data up to there (past `end`)."""
        if self.pending is not None:
            self._settle(buffer, end, at_end)
        if self.finder is None:
            self.finder = _Finder(self.needle, buffer[: min(end, _sample_bytes(self.needle))])
        find = self.finder.find
        position = find(buffer, 0, end)
        while position != -1:
            start = buffer.rfind(b"\n", 0, position) + 1
            stop = buffer.find(b"\n", position, end)
            stop = end if stop == -1 else stop
            if not (start == 0 and self.line_open):
                if len(self.hits) == self.limit:
                    return True
                ends = stop < end or at_end
                self._hit(buffer, start, position, stop if ends else filled or end, ends)
            self.line_open = stop == end
            position = find(buffer, stop + 1, end) if stop < end else -1
        if newline_terminated:
            self.line_open, self.carried = False, 0
        return False

    def carry(self, length: int) -> None:
        """The buffer's first `length` bytes, all of the open line, are about to be dropped."""
        self.carried += length

    def drop(self, buffer: bytearray, length: int) -> None:
        """Count the newlines of `buffer[:length]` before it is overwritten."""
        self._number_at(buffer, length)
        self.counted = 0

    def _hit(
        self, buffer: bytearray, start: int, position: int, known_end: int, ends: bool
    ) -> None:
        """A hit at `position` on the line from `start`; `ends`: the line ends at `known_end`,
        else the buffer holds it up to there."""
        origin = start - (self.carried if start == 0 else 0)  # the line's start, maybe before
        known = known_end - origin
        lo, hi = hit_window(known, position - origin, position - origin + len(self.needle))
        shown = bytes(buffer[origin + lo : origin + hi])
        number = self._number_at(buffer, start)
        if ends:
            self.hits.append(make_part_line(number, shown, lo, known - hi))
        else:
            self.pending = (number, shown, lo, hi)

    def _settle(self, buffer: bytearray, end: int, at_end: bool) -> None:
        """The pending hit's line, once the buffer shows where that line ends."""
        newline = buffer.find(b"\n", 0, end)
        if newline == -1 and not at_end:
            return
        if self.pending is None:
            return
        number, shown, before, shown_end = self.pending
        length = self.carried + (end if newline == -1 else newline)
        self.hits.append(make_part_line(number, shown, before, length - shown_end))
        self.pending = None

    def _number_at(self, buffer: bytearray, position: int) -> int:
        self.line += buffer.count(b"\n", self.counted, position)
        self.counted = position
        return self.line


# Finding the needle.


def _sample_bytes(needle: bytes) -> int:
    return max(SAMPLE_WORK // len(set(needle)), 4096)


class _Finder:
    """Finds the needle through the byte of it that is rarest in the log's first bytes.

    `find` of one byte is memchr; of a longer needle it is a byte loop that stops at every
    occurrence of the needle's last byte (`]` in `[RST_CHK]`, on every line of a UVM log). Each
    false candidate of the rare byte costs a Python step, so misses spend a credit that grows by one
    per `MISS_SPAN` bytes scanned; when it runs out, the whole needle is searched for over a
    doubling stretch before the rare byte is tried again.
    """

    def __init__(self, needle: bytes, sample: bytes | bytearray) -> None:
        self.needle = needle
        rare = min(sorted(set(needle)), key=sample.count)
        self.byte = bytes([rare])
        self.offset = needle.rindex(rare)
        self.credit = MAX_CREDIT
        self.whole_left = 1 << 62 if len(needle) == 1 else 0  # one byte: find is memchr
        self.backoff = CHUNK_BYTES

    def find(self, haystack: bytearray, start: int, end: int) -> int:
        """The position of the first needle in `haystack[start:end]`, or -1."""
        if self.whole_left > 0:
            found = haystack.find(self.needle, start, end)
            self.whole_left -= (end if found == -1 else found) - start
            return found
        needle, byte, offset = self.needle, self.byte, self.offset
        size = len(needle)
        last = end - size + offset + 1
        scanned = start + offset
        if last <= scanned:  # also keeps a negative `last` from counting from the end
            return -1
        while (candidate := haystack.find(byte, scanned, last)) != -1:
            begin = candidate - offset
            self.credit = min(self.credit + (candidate - scanned) / MISS_SPAN, MAX_CREDIT)
            if haystack.find(needle, begin, begin + size) == begin:
                return begin
            self.credit -= 1
            if self.credit < 0:
                return self._give_up(haystack, begin + 1, end)
            scanned = candidate + 1
        self.credit = min(self.credit + (last - scanned) / MISS_SPAN, MAX_CREDIT)
        return -1

    def _give_up(self, haystack: bytearray, start: int, end: int) -> int:
        self.whole_left, self.backoff = self.backoff, min(2 * self.backoff, 64 * CHUNK_BYTES)
        self.credit = MAX_CREDIT
        return self.find(haystack, start, end)
