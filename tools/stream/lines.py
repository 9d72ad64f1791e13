"""Reading records line by line with bounded memory."""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterable, Iterator

MAX_LINE_BYTES = 64 * 1024
"""A longer line is cut here; the rest of it is skipped, so line numbers stay right."""
NUMPY_SPAN = 64 * 1024
"""From this many bytes, newlines are counted by NumPy (about 8× `bytes.count` here)."""


def iter_lines(
    stream: io.BufferedIOBase, max_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes]]:
    """Yield `(line number, line bytes without its ending)`, holding at most one line."""
    number = 0
    while True:
        line = stream.readline(max_bytes)
        if not line:
            return
        number += 1
        if len(line) == max_bytes and not line.endswith(b"\n"):
            _skip_rest_of_line(stream, max_bytes)
        yield number, line.rstrip(b"\r\n")


def _skip_rest_of_line(stream: io.BufferedIOBase, max_bytes: int) -> None:
    while True:
        rest = stream.readline(max_bytes)
        if not rest or rest.endswith(b"\n"):
            return


def without_bom(lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """The lines with a UTF-8 byte-order mark before the first one dropped: Excel and some editors
    write one before a CSV header or a Markdown heading."""
    for number, raw in lines:
        yield number, raw.removeprefix(codecs.BOM_UTF8) if number == 1 else raw


def count_newlines(data: memoryview | bytes) -> int:
    """From `NUMPY_SPAN` bytes NumPy counts, at memory speed and without the GIL (the read-ahead
    thread counts each chunk while the caller scans the one before)."""
    if len(data) < NUMPY_SPAN:
        return bytes(data).count(b"\n") if isinstance(data, memoryview) else data.count(b"\n")
    import numpy as np  # here: a command that counts no large span never loads it

    return int(np.count_nonzero(np.frombuffer(data, np.uint8) == ord("\n")))


def nth_newline_end(data: memoryview, nth: int) -> int | None:
    """The position just after the `nth` newline of `data` (1-based), or None if it has fewer."""
    if nth <= 0:
        return 0
    import numpy as np

    found = np.flatnonzero(np.frombuffer(data, np.uint8) == ord("\n"))
    return int(found[nth - 1]) + 1 if nth <= len(found) else None
