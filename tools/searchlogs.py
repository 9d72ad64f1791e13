"""searchlogs: the first lines of an approved log that contain a fixed string.

Like `grep -F -m LIMIT -n`: case-sensitive, byte-exact, one hit per line. The log (plain or gzip)
is streamed through one reusable buffer, so memory is bounded by the buffer and the kept lines, not
by the log's size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Annotated

from pydantic import Field

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.lines import MAX_LINE_BYTES
from tools.records import Record, open_record

CHUNK_BYTES = 1 << 20


class SearchLogsArgs(ToolArgs):
    path: RecordId
    """The exact id of an approved `log` record."""
    query: SearchText
    """A fixed string, matched case-sensitively."""
    limit: Annotated[int, Field(ge=1, le=200)] = 20
    """How many matching lines to return."""


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
    return make_excerpt(summary, hits, truncated=more)


def find_lines(stream: IO[bytes], needle: bytes, limit: int) -> tuple[list[Line], bool]:
    """The first `limit` lines containing `needle`, and whether another one follows.

    Reads into one reusable buffer (`readinto`, no per-chunk allocation); the incomplete line at
    the end of a chunk is moved to the buffer's front before the next read.
    """
    scan = _Scan(needle, limit)
    buffer = bytearray(2 * CHUNK_BYTES + MAX_LINE_BYTES)
    window = memoryview(buffer)
    held = 0
    while read := stream.readinto(window[held : held + CHUNK_BYTES]):
        filled = held + read
        end = buffer.rfind(b"\n", 0, filled) + 1
        if end == 0 and filled > MAX_LINE_BYTES:
            # An overlong line: search what we hold, keep an overlap for a needle that straddles.
            if scan.search(buffer, filled, newline_terminated=False):
                return scan.hits, True
            keep = len(needle) - 1
            buffer[:keep] = buffer[filled - keep : filled]
            held = keep
            continue
        if end and scan.search(buffer, end):
            return scan.hits, True
        held = filled - end
        buffer[:held] = buffer[end:filled]
    if held and scan.search(buffer, held, newline_terminated=False):
        return scan.hits, True
    return scan.hits, False


class _Scan:
    """Hits found so far and the number of the line at the start of the next buffer."""

    def __init__(self, needle: bytes, limit: int) -> None:
        self.needle = needle
        self.limit = limit
        self.hits: list[Line] = []
        self.line = 1

    def search(self, buffer: bytes | bytearray, end: int, newline_terminated: bool = True) -> bool:
        """Record hits in `buffer[:end]`; True once a hit beyond the limit is seen."""
        number, counted_to = self.line, 0
        position = buffer.find(self.needle, 0, end)
        while position != -1:
            start = buffer.rfind(b"\n", 0, position) + 1
            stop = buffer.find(b"\n", position, end)
            stop = end if stop == -1 else stop
            number += buffer.count(b"\n", counted_to, start)
            counted_to = start
            if not (self.hits and self.hits[-1].number == number):
                if len(self.hits) == self.limit:
                    return True
                self.hits.append(
                    make_line(number, bytes(buffer[start : min(stop, start + MAX_LINE_BYTES)]))
                )
            position = buffer.find(self.needle, stop + 1, end) if stop < end else -1
        if newline_terminated:
            self.line += buffer.count(b"\n", 0, end)
        return False
