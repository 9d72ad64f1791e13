"""Reading a stream one chunk ahead of its consumer, on a thread, with its newlines counted.

A search spends its time in two places that release the GIL: copying the file in (`readinto`,
zlib for a gzip log, and the record's sha256) and scanning it (Hyperscan). On two cores they
overlap: a thread fills a few reusable buffers and counts each chunk's newlines (NumPy, which
also releases the GIL) while the caller scans the one before. The first chunk is read in the
caller's thread: a search that ends there (a short log, or the first hits of a long one) starts
no thread and allocates one buffer. Each buffer keeps `reserve` bytes free at its front, where the
caller puts the unfinished line carried from the chunk before, so a chunk and its carried line
are one contiguous window without copying the chunk. Reads still go through the record's stream:
hashed, and cut by the call's limit and the run's deadline (an error there is raised to the
caller, in order).
"""

from __future__ import annotations

import io
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from tools.stream.lines import count_newlines

CHUNK_BYTES = 2 << 20
RESERVE_BYTES = 64 << 10
"""Room for the unfinished line carried into the next buffer; a longer one is a long line."""
DEPTH = 4
"""Buffers in turn: one scanned, the others read ahead."""


class Chunk(NamedTuple):
    buffer: bytearray
    """The chunk's bytes are `buffer[reserve : reserve + size]`; the front is the caller's."""
    size: int
    """0 at the end of the stream."""
    newlines: int


@contextmanager
def read_ahead(
    stream: io.BufferedIOBase,
    chunk_bytes: int = CHUNK_BYTES,
    reserve: int = RESERVE_BYTES,
    depth: int = DEPTH,
) -> Iterator[Iterator[Chunk]]:
    """Chunks of the stream in order, the last of size 0. A chunk's buffer is the caller's until
    it asks for the next one; leaving the block early stops the thread."""
    free: queue.SimpleQueue[bytearray | None] = queue.SimpleQueue()
    ready: queue.SimpleQueue[Chunk | BaseException] = queue.SimpleQueue()
    threads: list[threading.Thread] = []

    def chunks() -> Iterator[Chunk]:
        first = _read(stream, bytearray(reserve + chunk_bytes), reserve)
        yield first
        if not first.size:
            return
        free.put(first.buffer)
        for _ in range(depth - 1):
            free.put(bytearray(reserve + chunk_bytes))
        reader = threading.Thread(
            target=_fill,
            args=(stream, reserve, free, ready),
            name="warrant-read-ahead",
            daemon=True,
        )
        threads.append(reader)
        reader.start()
        yield from _handed_over(free, ready)

    try:
        yield chunks()
    finally:
        free.put(None)  # the reader stops at its next buffer
        for reader in threads:
            reader.join()


def _read(stream: io.BufferedIOBase, buffer: bytearray, reserve: int) -> Chunk:
    size = stream.readinto(memoryview(buffer)[reserve:])
    return Chunk(buffer, size, count_newlines(memoryview(buffer)[reserve : reserve + size]))


def _fill(
    stream: io.BufferedIOBase,
    reserve: int,
    free: queue.SimpleQueue[bytearray | None],
    ready: queue.SimpleQueue[Chunk | BaseException],
) -> None:
    while (buffer := free.get()) is not None:
        try:
            chunk = _read(stream, buffer, reserve)
        except BaseException as error:  # raised again in the caller's thread
            ready.put(error)
            return
        ready.put(chunk)
        if not chunk.size:
            return


def _handed_over(
    free: queue.SimpleQueue[bytearray | None], ready: queue.SimpleQueue[Chunk | BaseException]
) -> Iterator[Chunk]:
    while True:
        item = ready.get()
        if isinstance(item, BaseException):
            raise item
        yield item
        if not item.size:
            return
        free.put(item.buffer)  # the caller is done with it: it asked for the next
