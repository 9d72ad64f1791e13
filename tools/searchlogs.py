"""searchlogs: the first lines of an approved log that contain a fixed string.

Like `grep -F -m LIMIT -n`: case-sensitive, byte-exact, one hit per line. A plain log is searched
memory-mapped; a gzip log is streamed in chunks. Either way private memory is bounded by a chunk and
the kept lines, not by the log's size.
"""

from __future__ import annotations

import io
import mmap
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
        if isinstance(stream, io.BufferedReader) and records["path"].size > 0:
            hits, more = find_lines_mapped(stream, needle, args.limit)
        else:  # gzip (or empty): stream it
            hits, more = find_lines(stream, needle, args.limit)
    if not hits:
        summary = f"no line contains {args.query!r}"
    else:
        summary = f"{len(hits)} line(s) contain {args.query!r}"
        if more:
            summary += f"; more lines match beyond the limit of {args.limit}"
    return make_excerpt(summary, hits, truncated=more)


def find_lines_mapped(
    stream: io.BufferedReader, needle: bytes, limit: int
) -> tuple[list[Line], bool]:
    """`find_lines` over a memory-mapped plain file: `bytes.find` runs over the file without copying
    it, and newlines are counted only up to each hit. Mapped pages are the page cache's, not the
    process's private memory."""
    with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as view:
        hits: list[Line] = []
        line, counted, size = 1, 0, len(view)
        position = _find(view, needle, 0)
        while position != -1:
            start = view.rfind(b"\n", 0, position) + 1
            stop = view.find(b"\n", position)
            stop = size if stop == -1 else stop
            line += _count_newlines(view, counted, start)
            counted = start
            if len(hits) == limit:
                return hits, True
            hits.append(make_line(line, view[start : min(stop, start + MAX_LINE_BYTES)]))
            position = _find(view, needle, stop + 1) if stop < size else -1
        return hits, False


WINDOW_BYTES = 32 << 20
"""Mapped pages behind the scan are released window by window, so resident memory stays bounded."""


def _find(view: mmap.mmap, needle: bytes, start: int) -> int:
    size = len(view)
    while start < size:
        end = min(start + WINDOW_BYTES, size)
        found = view.find(needle, start, min(end + len(needle) - 1, size))
        _release(view, start, end)
        if found != -1:
            return found
        start = end
    return -1


def _count_newlines(view: mmap.mmap, start: int, stop: int) -> int:
    total = 0
    for offset in range(start, stop, WINDOW_BYTES):
        end = min(offset + WINDOW_BYTES, stop)
        total += view[offset:end].count(b"\n")
        _release(view, offset, end)
    return total


def _release(view: mmap.mmap, start: int, end: int) -> None:
    first = start // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        view.madvise(mmap.MADV_DONTNEED, first, end - first)


def find_lines(stream: IO[bytes], needle: bytes, limit: int) -> tuple[list[Line], bool]:
    """The first `limit` lines containing `needle`, and whether another one follows."""
    scan = _Scan(needle, limit)
    pending = b""
    while chunk := stream.read(CHUNK_BYTES):
        buffer = pending + chunk
        end = buffer.rfind(b"\n") + 1
        if end == 0 and len(buffer) > MAX_LINE_BYTES:
            # An overlong line: search what we hold, keep an overlap for a needle that straddles.
            if scan.search(buffer, len(buffer), newline_terminated=False):
                return scan.hits, True
            pending = buffer[len(buffer) - len(needle) + 1 :] if len(needle) > 1 else b""
            continue
        if end and scan.search(buffer, end):
            return scan.hits, True
        pending = buffer[end:]
    if pending and scan.search(pending, len(pending), newline_terminated=False):
        return scan.hits, True
    return scan.hits, False


class _Scan:
    """Hits found so far and the number of the line at the start of the next buffer."""

    def __init__(self, needle: bytes, limit: int) -> None:
        self.needle = needle
        self.limit = limit
        self.hits: list[Line] = []
        self.line = 1

    def search(self, buffer: bytes, end: int, newline_terminated: bool = True) -> bool:
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
                    make_line(number, buffer[start : min(stop, start + MAX_LINE_BYTES)])
                )
            position = buffer.find(self.needle, stop + 1, end) if stop < end else -1
        if newline_terminated:
            self.line += buffer.count(b"\n", 0, end)
        return False
