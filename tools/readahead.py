"""Reading a stream one chunk ahead of its consumer, on a thread, with its newlines counted.

A search spends its time in two places that release the GIL: copying the file in (`readinto`,
zlib for a gzip log, and the record's sha256) and scanning it (Hyperscan). On two cores they
overlap: a thread fills a few reusable buffers and counts each chunk's newlines (NumPy, which
also releases the GIL) while the caller scans the one before. Each buffer keeps `reserve` bytes
free at its front, where the caller puts the unfinished line carried from the chunk before, so a
chunk and its carried line are one contiguous window without copying the chunk. Reads still go
through the record's stream: hashed, and cut by the call's limit and the run's deadline (an
error there is raised to the caller, in order).
"""

from __future__ import annotations

import io
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

CHUNK_BYTES = 2 << 20
RESERVE_BYTES = 64 << 10
"""Room for the unfinished line carried into the next buffer; a longer one is a long line."""
DEPTH = 4
"""Buffers in turn: one scanned, the others read ahead."""
NEWLINE = 10


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
    for _ in range(depth):
        free.put(bytearray(reserve + chunk_bytes))
    reader = threading.Thread(
        target=_fill, args=(stream, reserve, free, ready), name="warrant-read-ahead", daemon=True
    )
    reader.start()
    try:
        yield _chunks(free, ready)
    finally:
        free.put(None)  # the reader stops at its next buffer
        reader.join()


def _fill(
    stream: io.BufferedIOBase,
    reserve: int,
    free: queue.SimpleQueue[bytearray | None],
    ready: queue.SimpleQueue[Chunk | BaseException],
) -> None:
    while (buffer := free.get()) is not None:
        try:
            size = stream.readinto(memoryview(buffer)[reserve:])
        except BaseException as error:  # raised again in the caller's thread
            ready.put(error)
            return
        data = np.frombuffer(buffer, np.uint8, size, reserve)
        ready.put(Chunk(buffer, size, int(np.count_nonzero(data == NEWLINE))))
        if not size:
            return


def _chunks(
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
