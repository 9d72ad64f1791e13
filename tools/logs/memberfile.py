"""A family member's bytes, read as a worker reads them: each file opened once, its gzip
decompressed as it is read, a pinned member proven to be the version admitted. `familyscan`
scans through it and `searchfamily` searches through it; a worker runs in a process pool, so
this module imports nothing heavy.

**Reading** (`MemberFile`, which `searchfamily` reads through too). A member is opened without
following a last symlink and without blocking; anything but a regular file is refused. It is read
up to the size it had when opened: a member still being written is read that far and the scan says
so (`grown`). A gzip member (by its magic bytes) is decompressed as it is read, at most `Limits.cap`
decompressed bytes of it (said when more follow). A member whose first 8 KiB (decompressed) hold a
NUL byte is refused as binary, as `grep` calls a file binary.

**A pinned member** (`Member.sha256`, from its record) gets what `scenario.reading` gives a
single record: it is read only if it is still the file of one link with the size, mtime and inode
pinned at admission, to exactly its pinned size, and its bytes count only if they are proven to be
the version admitted: hashed as they are read (a gzip member's compressed bytes, to its end), or,
when the main process's digest memory vouches for the file's identity at open (`Member.trusted`),
not hashed unless that identity moved while it was read (then its first `size` bytes are hashed by
offset). A worker has no reading session: the call's deadline comes in `Limits.until`, and a
member not read by then is not read. Each of these is that member's unknown (`unread`), never the
family's end.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from scenario.digests import FileIdentity, identity_of

CHUNK_BYTES = 4 << 20
"""Read at a time (a smaller member is read whole, in one read)."""
BINARY_PROBE = 8 << 10
"""A NUL byte in this many first bytes makes a member binary."""
GZIP_MAGIC = b"\x1f\x8b"


class Member(NamedTuple):
    """A family member: its id (as cited), its file, and the pin its record got at admission.

    A member without a pin (`sha256` None) is read as it is, unchecked. A named tuple: made for
    each of up to 10,000 members per call and sent to a worker, where a frozen dataclass costs
    several times as much to make and to pickle."""

    id: str
    path: str
    sha256: str | None = None
    """The sha256 of its bytes as admitted (`Record.sha256`)."""
    size: int = 0
    mtime_ns: int = 0
    inode: int = 0
    """With size and mtime, the identity pinned at admission (0: not compared)."""
    trusted: FileIdentity | None = None
    """The identity of its file (`digests.identity_of`) for which the main process's digest
    memory holds `sha256`: a file opened with exactly this identity is not hashed again."""


CHANGED = "changed after the run was admitted"
NOT_ADMITTED = "was read, but its bytes are not the version admitted (sha256 differs)"
TIME_PASSED = "was not read: the call's time limit passed"
HASH_BLOCK = 1 << 20
"""Bytes hashed at a time when a member is hashed apart from its reading."""


class Digest(Protocol):
    """What a member's bytes are hashed with: `hashlib.sha256`, or a test's counting one."""

    def update(self, data: bytes | bytearray | memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


@dataclass(frozen=True)
class Limits:
    """The call's limits on reading a member. A worker has no reading session (it is another
    process): the main process hands these over (`tools.logs.familypool.session_limits`)."""

    until: float | None = None
    """`time.monotonic()` past which nothing more is read: the session's `Reading.until`
    (CLOCK_MONOTONIC on Linux, one clock for every process of the machine)."""
    cap: int | None = None
    """Decompressed bytes read of a gzip member (the tools pass `reading.MAX_STREAMED_BYTES`)."""
    sha256: Callable[[], Digest] = hashlib.sha256
    """What a pinned member's bytes are hashed with (a test passes one that counts)."""


NO_LIMITS = Limits()


class Unread(Exception):
    """A member that cannot be read as text: the reason is its unknown."""


class Source(io.RawIOBase):
    """A member's raw bytes: at most `limit` bytes of its descriptor (its pinned size, or its
    size when opened), each hashed once as it passes when there is a `digest`, the time limit
    checked before each read."""

    def __init__(self, fd: int, limit: int, digest: Digest | None, until: float | None) -> None:
        super().__init__()
        self._fd, self._left, self._digest, self._until = fd, limit, digest, until
        self.limit = limit
        self.count = 0
        """Bytes read so far."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._left <= 0:
            return 0
        if self._until is not None and time.monotonic() > self._until:
            raise Unread(TIME_PASSED)
        view = memoryview(buffer)[: self._left]
        try:
            count = os.readv(self._fd, [view])
        except OSError as error:
            raise Unread(f"could not be read ({error.strerror or error})") from None
        if count and self._digest is not None:
            self._digest.update(view[:count])
        self._left -= count
        self.count += count
        return count

    def drain(self) -> None:
        """Read the rest of the limit (hashed): what a gzip decoder left, or what a cap cut."""
        if self._left > 0:
            block = memoryview(bytearray(min(self._left, HASH_BLOCK)))
            while self.readinto(block):
                pass


class MemberFile:
    """`with MemberFile(member, limits) as (source, notes)`: a member's raw bytes and the notes
    on their reading (filled when the block ends). Raises `Unread`.

    The member is opened without following a last symlink and without blocking, and must be a
    regular file. A pinned member must also have one link and the identity pinned at its
    admission (size, mtime, inode), and is read to exactly its pinned size; when the block ends,
    the bytes read are proven to be the version admitted: hashed as they were read, or, when the
    file at open was the identity the main process's digest memory vouches for
    (`Member.trusted`), not hashed at all unless its identity moved while it was read (then its
    first `size` bytes are hashed again). A class rather than a generator: it is entered once a
    member, thousands of times a call."""

    def __init__(self, member: Member, limits: Limits = NO_LIMITS) -> None:
        self._member, self._limits = member, limits
        self._fd = -1

    def __enter__(self) -> tuple[Source, list[str]]:
        member, limits = self._member, self._limits
        if limits.until is not None and time.monotonic() > limits.until:
            raise Unread(TIME_PASSED)
        try:
            self._fd = fd = os.open(
                member.path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
            )
        except OSError as error:
            raise Unread(f"cannot be opened: {error.strerror or error}") from None
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise Unread("is not a regular file")
            self._digest: Digest | None = None
            if member.sha256 is None:  # not pinned: read as it is
                size = found.st_size
            else:
                _check_pin(member, found)
                size = member.size
                self._opened = identity_of(found)
                if self._opened != member.trusted:
                    self._digest = limits.sha256()
            self._source = Source(fd, size, self._digest, limits.until)
            self._notes: list[str] = []
        except BaseException:
            self._close()
            raise
        return self._source, self._notes

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        try:
            if kind is None:
                self._finish()
        finally:
            self._close()

    def _finish(self) -> None:
        member, source, size = self._member, self._source, self._source.limit
        now = os.fstat(self._fd)
        if member.sha256 is not None:
            if self._digest is not None:
                source.drain()
                if (source.count, self._digest.hexdigest()) != (size, member.sha256):
                    raise Unread(NOT_ADMITTED)
            elif (
                identity_of(now) != self._opened
                and _pread_sha256(self._fd, size, self._limits) != member.sha256
            ):
                raise Unread(NOT_ADMITTED)
        if now.st_size > size:
            self._notes.append(
                f"grew while it was read: read up to {size} bytes, its size when opened"
                f" (now {now.st_size})"
            )

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _check_pin(member: Member, found: os.stat_result) -> None:
    if found.st_nlink != 1:
        raise Unread(f"has {found.st_nlink} hard links")
    pinned = (member.size, member.mtime_ns, member.inode or found.st_ino)
    if (found.st_size, found.st_mtime_ns, found.st_ino) != pinned:
        raise Unread(CHANGED)


def _pread_sha256(fd: int, size: int, limits: Limits) -> str:
    """The sha256 of the descriptor's first `size` bytes (empty if it has fewer), read by
    offset: the reading's own position is left alone."""
    digest = limits.sha256()
    block = memoryview(bytearray(min(size, HASH_BLOCK)))
    offset = 0
    while offset < size:
        if limits.until is not None and time.monotonic() > limits.until:
            raise Unread(TIME_PASSED)
        try:
            count = os.preadv(fd, [block[: size - offset]], offset)
        except OSError as error:
            raise Unread(f"could not be read ({error.strerror or error})") from None
        if not count:
            return ""
        digest.update(block[:count])
        offset += count
    return digest.hexdigest()


class Capped(io.RawIOBase):
    """A gzip member's decompressed bytes, stopped after `cap` of them (None: no cap); a note
    says so when more follow."""

    def __init__(self, source: io.BufferedIOBase, cap: int | None, notes: list[str]) -> None:
        super().__init__()
        self._source, self._cap, self._notes = source, cap, notes
        self._stopped = False
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        view = memoryview(buffer)
        if self._cap is not None:
            room = self._cap - self.count
            if room <= 0:
                if not self._stopped and self._source.read(1):
                    self._notes.append(
                        f"decompressed past the cap of {self._cap} bytes: read the first"
                        f" {self._cap}"
                    )
                self._stopped = True
                return 0
            view = view[:room]
        count = self._source.readinto(view)
        self.count += count
        return count


def read_chunks(
    member: Member, visit: Callable[[bytearray, int, bool], None], limits: Limits = NO_LIMITS
) -> tuple[int, list[str]]:
    """Feed the member's bytes (decompressed) to `visit`: a buffer, the count of its first bytes
    that are the next chunk, and whether it is known to be the last; the bytes read and the notes
    on the reading. Raises `Unread`."""
    with MemberFile(member, limits) as (source, notes):
        total = _feed(source, visit, notes, limits.cap)
    return total, notes


def _feed(
    source: Source,
    visit: Callable[[bytearray, int, bool], None],
    notes: list[str],
    cap: int | None,
) -> int:
    buffer = _buffer()
    count = source.readinto(buffer)
    if buffer[:2] == GZIP_MAGIC and count >= 2:
        return _feed_gzip(bytes(buffer[:count]), source, buffer, visit, notes, cap)
    total = 0
    while count:
        total += count
        visit(buffer, count, total >= source.limit)
        if total >= source.limit:  # the whole member: its pinned size, or its size at open
            return total
        count = source.readinto(buffer)
    return total


_BUFFERS = threading.local()


def _buffer() -> bytearray:
    """This thread's read buffer, reused member after member: a fresh one would cost its page
    faults again for every member (most are read in one read)."""
    found: bytearray | None = getattr(_BUFFERS, "buffer", None)
    if found is None:
        found = _BUFFERS.buffer = bytearray(CHUNK_BYTES)
    return found


class _Prefixed(io.RawIOBase):
    """The bytes already read, then the rest of the source."""

    def __init__(self, head: bytes, rest: Source) -> None:
        super().__init__()
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        if self._head:
            count = min(len(buffer), len(self._head))
            memoryview(buffer)[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        return self._rest.readinto(buffer)


def _feed_gzip(
    head: bytes,
    source: Source,
    buffer: bytearray,
    visit: Callable[[bytearray, int, bool], None],
    notes: list[str],
    cap: int | None,
) -> int:
    raw = io.BufferedReader(_Prefixed(head, source), 1 << 20)
    total = 0
    with gzip.GzipFile(fileobj=raw) as unpacked:
        capped = Capped(unpacked, cap, notes)
        while True:
            try:
                count = capped.readinto(buffer)
            except EOFError:
                notes.append(f"its gzip stream ends early: read {total} decompressed bytes")
                return total
            except (OSError, zlib.error) as error:
                if not total:
                    raise Unread(f"is not a readable gzip file ({error})") from None
                notes.append(f"its gzip stream is damaged after {total} decompressed bytes")
                return total
            if not count:
                return total
            total += count
            visit(buffer, count, False)
