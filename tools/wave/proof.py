"""A waveform record read by path, proven the admitted version.

pywellen opens a file by its path, not through the record's hashed stream (`scenario/reading.py`).
So the record is opened through that stream first (confined, the admitted regular file, its
identity checked), pywellen reads the path while that descriptor is held, and then the stream is
hashed to its end: the call stands only if the sha256 is the one pinned at admission and the path
still names the same file (`record_changed` otherwise).
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager

from contract.codes import RefusalCode
from contract.errors import RecordRefusal
from scenario.reading import open_record
from scenario.registry import Record


@contextmanager
def admitted_path(record: Record) -> Iterator[str]:
    """The record's path, to hand to a reader that opens files itself; on leaving, the file is
    proven to be the admitted version, or `record_changed` is raised."""
    with open_record(record) as stream:
        try:
            yield record.path
        except BaseException:
            _prove(stream, record)  # a reader that failed on a changed file: say it changed
            raise
        _prove(stream, record)


def _prove(stream: io.BufferedIOBase, record: Record) -> None:
    """The stream, hashed to its end, and the path's file now are the admitted version."""
    digest = hashlib.file_digest(stream, "sha256").hexdigest()
    try:
        found = os.stat(record.path, follow_symlinks=False)
    except OSError:
        found = None
    pinned = (record.size, record.mtime_ns, record.inode or (found.st_ino if found else -1))
    now = (found.st_size, found.st_mtime_ns, found.st_ino) if found else None
    if digest != record.sha256 or now != pinned:
        raise RecordRefusal(
            RefusalCode.RECORD_CHANGED, f"{record.id} differs from the version admitted"
        )
