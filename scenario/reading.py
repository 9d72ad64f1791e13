"""Reading approved records within limits, and proving which bytes were read.

A tool call reads inside a `reading` session (the executor opens one per call):
- a record is opened non-blocking and without following a last symlink, then re-checked as the
  same regular file of one link, so a FIFO, a device or a swapped file is refused, never waited on;
- every byte read from the file is hashed as it is read (one pass), and at the end of the call the
  rest of the file is hashed from the same descriptor: the evidence stands only if that sha256 is
  the one pinned at admission (`record_changed` otherwise); a file whose identity (inode, size,
  mtime, ctime) still carries the digest this process computed is not hashed again, and instead
  must keep that identity to the end of the call (`scenario/digests.py`);
- every read checks the call's time limit (`tool_timeout`) and the run's deadline
  (`deadline_passed`), and decompressed bytes are capped per record kind, so no record can hold
  a call past its limits.
Outside a session (a tool called directly, as in unit tests) reads are hashed but unchecked.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from contract.codes import RefusalCode
from contract.errors import RecordRefusal
from scenario.digests import FileIdentity, identity_of, known, remember
from scenario.files import NON_BLOCKING
from scenario.recordfile import GZIP_MAGIC, MAX_RECORD_BYTES
from scenario.registry import Record

MAX_STREAMED_BYTES = 16 << 30
"""Decompressed bytes a call may read from a log or STA report (specs and histories have their
own, smaller caps: `MAX_RECORD_BYTES`)."""
HASH_BLOCK = 1 << 20


class ReadCut(RecordRefusal):
    """A read stopped by the call's time limit or the run's deadline."""


@dataclass
class Reading:
    """One tool call's reads: their limits, and every file it opened (kept open to verify)."""

    until: float | None = None
    """`time.monotonic()` after which a read is cut."""
    cut_code: RefusalCode = RefusalCode.TOOL_TIMEOUT
    cut_detail: str = ""
    opened: list[_HashedFile] = field(default_factory=list)

    def check_time(self) -> None:
        if self.until is not None and time.monotonic() > self.until:
            raise ReadCut(self.cut_code, self.cut_detail)

    def verify(self) -> None:
        """Each opened file, hashed to its end on its own descriptor, is the admitted version."""
        for opened in self.opened:
            opened.verify()


_CURRENT: ContextVar[Reading | None] = ContextVar("warrant_reading", default=None)


@contextmanager
def reading(
    seconds: float | None, cut_code: RefusalCode = RefusalCode.TOOL_TIMEOUT, cut_detail: str = ""
) -> Iterator[Reading]:
    """A session for one tool call: reads are cut `seconds` from now; every file is closed after."""
    session = Reading(
        until=None if seconds is None else time.monotonic() + seconds,
        cut_code=cut_code,
        cut_detail=cut_detail or f"the call ran past its limit of {seconds or 0:.0f}s",
    )
    token = _CURRENT.set(session)
    try:
        yield session
    finally:
        _CURRENT.reset(token)
        for opened in session.opened:
            opened.release()


def deadline() -> float | None:
    """The current session's `until` (a `time.monotonic()` value), if it has one: what a read in
    another process (a family tool's worker) must stop at. None outside a session."""
    session = _CURRENT.get()
    return None if session is None else session.until


def check_time() -> None:
    """Raise the current session's `ReadCut` (its code: `tool_timeout` or `deadline_passed`) if
    its time has passed: a call whose reads ran elsewhere is cut as a whole, as a read is."""
    session = _CURRENT.get()
    if session is not None:
        session.check_time()


@contextmanager
def open_record(record: Record) -> Iterator[io.BufferedIOBase]:
    """A binary stream of an approved record's content, gzip decompressed, read within the
    session's limits and hashed as it is read."""
    session = _CURRENT.get()
    raw = _HashedFile(*_open_regular(record), record, session)
    if session is not None:
        session.opened.append(raw)
    try:
        with io.BufferedReader(raw, HASH_BLOCK) as plain:
            if plain.peek(2)[:2] != GZIP_MAGIC:
                yield plain
                return
            cap = MAX_RECORD_BYTES.get(record.kind, MAX_STREAMED_BYTES)
            with io.BufferedReader(
                _Capped(gzip.GzipFile(fileobj=plain), record, cap, session)
            ) as unpacked:
                yield unpacked
    finally:
        if session is None:
            raw.release()


def _open_regular(record: Record) -> tuple[int, FileIdentity]:
    """A descriptor of the record's file, opened without blocking or following a last symlink,
    and only if it is still the admitted regular file of one link inside its root; with the
    identity it had when opened."""
    path = Path(record.path)
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE, f"{record.id} can no longer be read"
        ) from None
    if resolved != path or not resolved.is_relative_to(record.root):
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE, f"{record.id} no longer resolves to its file"
        )
    try:
        fd = os.open(resolved, NON_BLOCKING | os.O_NOFOLLOW)
    except OSError as exc:
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE,
            f"{record.id} can no longer be read: {exc.strerror or exc}",
        ) from None
    try:
        found = os.fstat(fd)
        _check_opened(found, record)
    except RecordRefusal:
        os.close(fd)
        raise
    return fd, identity_of(found)


def _check_opened(found: os.stat_result, record: Record) -> None:
    if not stat.S_ISREG(found.st_mode):
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE, f"{record.id} is no longer a regular file"
        )
    if found.st_nlink != 1:
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE, f"{record.id} now has {found.st_nlink} hard links"
        )
    pinned = (record.size, record.mtime_ns, record.inode or found.st_ino)
    if (found.st_size, found.st_mtime_ns, found.st_ino) != pinned:
        raise RecordRefusal(
            RefusalCode.RECORD_CHANGED, f"{record.id} changed after the run was admitted"
        )


class _HashedFile(io.RawIOBase):
    """The file's bytes in order, each hashed once as it passes; seeks go forward only (what is
    skipped is hashed too). Closing it leaves the descriptor to the session, which hashes the
    rest of the file at the end of the call.

    A file whose identity at open has the admitted sha256 remembered (`scenario/digests.py`) is
    not hashed again: its check at the end is that the identity did not move while it was read."""

    def __init__(
        self, fd: int, identity: FileIdentity, record: Record, session: Reading | None
    ) -> None:
        super().__init__()
        self._fd = fd
        self._identity = identity
        self._record = record
        self._session = session
        self._digest = hashlib.sha256()
        self._position = 0
        self._opened_ns = time.time_ns()
        self._trusted = known(identity) == record.sha256

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def fileno(self) -> int:
        # No descriptor for callers: a read beside this object (pread) would not be hashed.
        raise io.UnsupportedOperation("a record is read through its hashed stream")

    def tell(self) -> int:
        return self._position

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._session is not None:
            self._session.check_time()
        count = os.readv(self._fd, [buffer])
        if count:
            if not self._trusted:
                self._digest.update(memoryview(buffer)[:count])
            self._position += count
        return count

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = {io.SEEK_SET: offset, io.SEEK_CUR: self._position + offset}.get(whence)
        if target is None or target < self._position:
            raise io.UnsupportedOperation("a record is read forward only")
        self._hash_until(target)
        return self._position

    def _hash_until(self, target: int | None) -> None:
        if self._trusted:  # nothing to hash: skip to the target (the end, for `verify`)
            end = self._record.size if target is None else min(target, self._record.size)
            self._position = max(self._position, os.lseek(self._fd, end, os.SEEK_SET))
            return
        block = bytearray(min(HASH_BLOCK, max(self._record.size - self._position, 0) + 1))
        while target is None or self._position < target:
            wanted = len(block) if target is None else min(len(block), target - self._position)
            if not self.readinto(memoryview(block)[:wanted]):
                return

    def close(self) -> None:
        super().close()  # the descriptor stays open until the session has verified it

    def verify(self) -> None:
        """The whole file as read through this descriptor has the admitted sha256 and size."""
        if self._trusted:
            if identity_of(os.fstat(self._fd)) != self._identity:
                raise RecordRefusal(
                    RefusalCode.RECORD_CHANGED, f"{self._record.id} changed while it was read"
                )
            return
        self._hash_until(None)
        if (self._position, self._digest.hexdigest()) != (self._record.size, self._record.sha256):
            raise RecordRefusal(
                RefusalCode.RECORD_CHANGED,
                f"{self._record.id} read differs from the version admitted (sha256 {self._digest.hexdigest()[:16]}…)",
            )
        now = identity_of(os.fstat(self._fd))
        remember(self._identity, now, self._record.sha256, self._opened_ns)

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _Capped(io.RawIOBase):
    """Decompressed bytes, cut at the record kind's cap and checked against the time limit."""

    def __init__(
        self, source: gzip.GzipFile, record: Record, cap: int, session: Reading | None
    ) -> None:
        super().__init__()
        self._source = source
        self._record = record
        self._cap = cap
        self._session = session
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._session is not None:
            self._session.check_time()
        count = self._source.readinto(buffer)
        self._count += count
        if self._count > self._cap:
            raise RecordRefusal(
                RefusalCode.RECORD_UNAVAILABLE,
                f"{self._record.id} decompresses to more than {self._cap >> 20} MiB, the limit for a {self._record.kind} record",
            )
        return count

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._count

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = {io.SEEK_SET: offset, io.SEEK_CUR: self._count + offset}.get(whence)
        if target is None or target < self._count:
            raise io.UnsupportedOperation("a record is read forward only")
        block = bytearray(HASH_BLOCK)
        while self._count < target:
            if not self.readinto(memoryview(block)[: min(HASH_BLOCK, target - self._count)]):
                break
        return self._count

    def close(self) -> None:
        self._source.close()
        super().close()
