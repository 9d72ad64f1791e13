"""One member of a record family read once: its verdict as the log states it, its first error,
and that error's signature. The worker `triage` and `searchfamily` run in a process pool, so this
module imports nothing heavy (no pydantic, no NumPy): a worker starts in a few milliseconds.

**Reading** (`MemberFile`, which `searchfamily` reads through too). A member is opened without
following a last symlink and without blocking; anything but a regular file is refused. It is read
up to the size it had when opened: a member still being written is read that far and the scan says
so (`grown`). A gzip member (by its magic bytes) is decompressed as it is read, at most `Limits.cap`
decompressed bytes of it (said when more follow). A member whose first 8 KiB (decompressed) hold a
NUL byte is refused as binary, as `grep` calls a file binary.

**A pinned member** (`Member.sha256`, from its record) gets what `tools.records.reading` gives a
single record: it is read only if it is still the file of one link with the size, mtime and inode
pinned at admission, to exactly its pinned size, and its bytes count only if they are proven to be
the version admitted: hashed as they are read (a gzip member's compressed bytes, to its end), or,
when the main process's digest memory vouches for the file's identity at open (`Member.trusted`),
not hashed unless that identity moved while it was read (then its first `size` bytes are hashed by
offset). A worker has no reading session: the call's deadline comes in `Limits.until`, and a
member not read by then is not read. Each of these is that member's unknown (`unread`), never the
family's end.

**One pass.** Each window of whole lines (`CHUNK_BYTES` read at a time, the unfinished last line
carried over) goes through one Hyperscan database holding every trigger at once (`TRIGGERS`); only
the lines a trigger fires on are decoded and read by the rules below. A line longer than
`CHUNK_BYTES` is scanned in pieces (a trigger across two pieces is missed; the scan says so).

**The rules** (`tools/logs/logsummary.py`'s, line by line; Questa's `# ` transcript prefix is read
through):

- a UVM message line, `UVM_ERROR|UVM_FATAL [file(line)] @ time: reporter [ID] message`, is an
  *error*; a report summary's count line (`UVM_ERROR :    3`) is never one: after a
  `--- UVM Report Summary ---` line it is the summary's count, and a count of errors or fatals
  above zero states *fail*, counts of zero state *pass*;
- a Verilator `%Error…:` line, also after a run's simulation time (`[50] %Error: … Assertion
  failed`), is an error and states *fail*;
- a commercial simulator's error (`tools/logs/simmessages.py`: VCS `Error-[NOA] …` and `$error`/
  `$fatal` lines, Xcelium `*E`/`*SE`/`*F` messages, Questa `** Error`/`** Fatal`/`** Failure`) or
  a crash line (`An unexpected termination has occurred …`, `(core dumped)`) is an error and
  states *fail*; a non-zero `Execution of simv exited with code N`, Questa's `Errors: N` above
  zero and Xcelium's `Simulation terminated via $fatal` state *fail*;
- a cocotb test's failure record (`… cocotb.regression test_x failed`, at any level, or `Test
  Failed: test_x`) states *fail*, and its line is an error, unless a traceback follows it: then
  the traceback's exception line (`AssertionError: …`) is (`tools/logs/tracebacks.py`), and the
  traceback's lines are read no further; another cocotb log line at level `ERROR` or `CRITICAL`
  (`  1000.00ns ERROR    logger  message`) is an error; cocotb's `** TESTS=n PASS=p FAIL=f SKIP=s`
  states *fail* when `FAIL` is above zero, else *pass*;
- a pytest summary line (`=== 2 passed, 1 failed in 0.12s ===`) states *fail* when it counts a
  failure or an error, else *pass*;
- a verdict line, `TEST|SIMULATION PASSED|FAILED|PASS|FAIL` anywhere in a line that is not one of
  the above (case-insensitive), states what it says; inside a UVM message (`UVM_INFO … TEST
  PASSED`) it is not a verdict.

A member *fails* when any statement says fail, *passes* when statements say only pass, and has
*no verdict* when nothing states one (never guessed from its errors).

The first error's **signature** is `tools/logs/signatures.py`'s, the one rule a history cell is
read by too.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import stat
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Literal, NamedTuple, Protocol, cast

import hyperscan

from tools.logs import simmessages, tracebacks
from tools.logs.signatures import cell_signature as cell_signature
from tools.logs.signatures import error_signature
from tools.logs.signatures import mask as mask
from tools.records.digests import FileIdentity, identity_of
from tools.stream.patterns import scratch

CHUNK_BYTES = 4 << 20
"""Read at a time (a smaller member is read whole, in one read)."""
BINARY_PROBE = 8 << 10
"""A NUL byte in this many first bytes makes a member binary."""
MAX_LINE_BYTES = 64 << 10
"""Of a triggered line, the bytes the rules read (as `tools.stream.lines` cuts a line)."""
MAX_KEPT_CHARS = 1000
"""Of a cited line, the characters kept in a member's result (an excerpt clips it further)."""
GZIP_MAGIC = b"\x1f\x8b"
TEST_SUFFIXES = (".gz", ".log", ".txt", ".out")

Verdict = Literal["pass", "fail"]

_PREFIX = re.compile(rb"^# ?")
_MESSAGE = re.compile(
    rb"^(UVM_(?:INFO|WARNING|ERROR|FATAL)) (?:(?:[^@]|@(?! ))*? )?@ [^:]*: \S* \[([^\]]*)\]"
)
"""As `tools.logs.logsummary._MESSAGE`: `UVM_X [file(line)] @ time: reporter [ID]`."""
_SUMMARY_START = re.compile(rb"^-+ UVM Report Summary -+\s*$")
_SEVERITY_COUNT = re.compile(rb"^(UVM_(?:INFO|WARNING|ERROR|FATAL))\s*:\s*(\d+)\s*$")
_VERDICT = re.compile(rb"\b(?:TEST|SIMULATION)\s+(PASSED|FAILED|PASS|FAIL)\b", re.IGNORECASE)
_VERILATOR = re.compile(rb"^(?:\[[\d.]+\] )?%(Error)(-[\w]+)?:\s*(.*)$")
"""A Verilator error; at run time it follows the simulation time (`[50] %Error: … Assertion`)."""
_COCOTB_SUMMARY = re.compile(rb"\*\* TESTS=(\d+) PASS=(\d+) FAIL=(\d+) SKIP=(\d+)")
_COCOTB_ERROR = re.compile(
    rb"^[ \t]*\d+(?:\.\d+)?[ \t]*(?:fs|ps|ns|us|ms|s|step)?[ \t]+(ERROR|CRITICAL)[ \t]+(\S+)[ \t]*(.*)$"
)
_PYTEST = re.compile(rb"^=+ (.*\b(?:passed|failed|error|errors)\b.*) in [\d.]+s.*=+\s*$")
_PYTEST_FAILED = re.compile(rb"\b(?:failed|error|errors)\b")

TRIGGERS: tuple[tuple[bytes, int], ...] = (
    (rb"UVM_ERROR", 0),
    (rb"UVM_FATAL", 0),
    (rb"%Error", 0),
    (rb"UVM Report Summary", 0),
    (rb"PASS", hyperscan.HS_FLAG_CASELESS),
    (rb"FAIL", hyperscan.HS_FLAG_CASELESS),
    (rb"error", 0),
    (rb" ERROR", 0),
    (rb"\tERROR", 0),
    (rb" CRITICAL", 0),
    (rb"\tCRITICAL", 0),
    *((re.escape(literal), 0) for literal in simmessages.TRIGGERS),
)
r"""What makes a line worth reading: literals, a superset of every rule's lines (each rule then
decides): a verdict line, cocotb's summary and failure record and pytest's `passed`/`failed` hold
`PASS` or `FAIL` in some case; pytest's `error` is lower case; a cocotb level follows a space or a
tab; the simulators' are `simmessages.TRIGGERS`. Literals only:
Hyperscan runs them at several GB/s, where a regex such as `(?i)TEST\s+PASS` fires on every
`uvm_test_top`."""


@cache
def _triggers() -> hyperscan.Database:
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=[expression for expression, _ in TRIGGERS],
        ids=list(range(len(TRIGGERS))),
        elements=len(TRIGGERS),
        flags=[flags for _, flags in TRIGGERS],
    )
    return database


@dataclass(frozen=True, order=True)
class Cited:
    """One line of one member: enough to cite it and for a reader to open it."""

    member: str
    number: int
    text: str


@dataclass(frozen=True)
class MemberScan:
    """What one member says, kept small whatever its size."""

    member: str
    test: str
    verdict: Verdict | None = None
    stated: Cited | None = None
    """A failing member with no error line: the last line that states its failure."""
    first_error: Cited | None = None
    signature: str | None = None
    errors: int = 0
    """Error lines counted (by the rules above) to the end of the member."""
    unread: str | None = None
    """Why the member was not read (binary, not a regular file, unreadable, not the version
    admitted, past the call's time limit): its unknown."""
    notes: tuple[str, ...] = ()
    """What limits the reading (grown while read, cut gzip, long lines)."""
    size: int = 0
    """Bytes read (decompressed)."""


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


def member_test(member: str) -> str:
    """A member's test: its file name without `TEST_SUFFIXES` (`runs/R44/reset_smoke.log.gz` →
    `reset_smoke`)."""
    name = PurePosixPath(member).name
    changed = True
    while changed:
        changed = False
        for suffix in TEST_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


# Reading.

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
    process): the main process hands these over (`tools.logs.triage.session_limits`)."""

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


# Scanning.


@dataclass
class _State:
    member: str
    test: str
    line: int = 1
    """The number of the line that starts the next window."""
    carry: bytes = b""
    first: bool = True
    in_summary: bool = False
    """The last triggered line was a report summary's first line or one of its counts."""
    statements: list[tuple[Verdict, Cited]] = field(default_factory=list)
    """Statements of the windows before, numbered."""
    pending: list[tuple[Verdict, int, bytes]] = field(default_factory=list)
    """Statements of this window: verdict, offset of the line, the line."""
    said: set[Verdict] = field(default_factory=set)
    """Every verdict stated so far (numbered or not)."""
    first_error: Cited | None = None
    pending_error: tuple[int, bytes] | None = None
    first_error_raw: bytes = b""
    errors: int = 0
    long_lines: int = 0
    following: tracebacks.Following | None = None
    """A cocotb failure record whose traceback is being read."""
    provisional: bool = False
    """The first error is that record's line, until its traceback's exception line is read."""

    @property
    def verdict(self) -> Verdict | None:
        return "fail" if "fail" in self.said else "pass" if self.said else None


def scan_member(member: Member, limits: Limits = NO_LIMITS) -> MemberScan:
    """Read one member once: its verdict, first error and signature; an unreadable member (or
    one that is not the version admitted, or not read in time) is returned with the reason as
    `unread`, never raised."""
    test = member_test(member.id)
    state = _State(member.id, test)

    def visit(buffer: bytearray, count: int, last: bool) -> None:
        if state.first:
            state.first = False
            if buffer.find(b"\x00", 0, min(count, BINARY_PROBE)) >= 0:
                raise Unread(f"is binary (a NUL byte in its first {BINARY_PROBE} bytes): not read")
        _window(state, buffer, count, last)

    try:
        size, notes = read_chunks(member, visit, limits)
    except Unread as why:
        return MemberScan(member.id, test, unread=f"{member.id} {why}")
    if state.carry:  # a last line without a newline, after a window not known to be the last
        carry = state.carry
        _scan(state, carry, len(carry), last=True)
    if state.long_lines:
        notes.append(
            f"{state.long_lines} line(s) longer than {CHUNK_BYTES} bytes scanned in pieces"
        )
    return _result(state, size, notes)


def _result(state: _State, size: int, notes: list[str]) -> MemberScan:
    verdict = state.verdict
    stated = None
    if verdict == "fail" and state.first_error is None:
        stated = next(cited for said, cited in reversed(state.statements) if said == "fail")
    signature = error_signature(state.first_error_raw, state.test) if state.first_error else None
    return MemberScan(
        member=state.member,
        test=state.test,
        verdict=verdict,
        stated=stated,
        first_error=state.first_error,
        signature=signature,
        errors=state.errors,
        notes=tuple(notes),
        size=size,
    )


def _window(state: _State, buffer: bytearray, count: int, last: bool) -> None:
    """The carried bytes and the chunk, scanned up to the chunk's last newline (to its end when
    it is the member's last); the rest carried."""
    data: bytes | bytearray = state.carry + buffer[:count] if state.carry else buffer
    size = len(state.carry) + count if state.carry else count
    cut = size if last else data.rfind(b"\n", 0, size) + 1
    if not cut and size > CHUNK_BYTES:  # a line longer than a chunk: scanned in pieces
        state.long_lines += 1
        cut = size
    state.carry = bytes(data[cut:size])
    if cut:
        _scan(state, data, cut, last)


def _scan(state: _State, data: bytes | bytearray, size: int, last: bool) -> None:
    """The lines of `data[:size]` (whole lines from line `state.line`) the triggers fire on, read
    by the rules; a line holds one hit however many triggers fire on it. Newlines are counted
    only as far as a line number is needed: the first error's, and in the member's last window
    no further (a failure's statement is numbered only for a failing member with no error)."""
    ends: list[int] = []

    def hit(ident: int, start: int, end: int, flags: int, context: object) -> None:
        ends.append(end)

    database = _triggers()
    window = memoryview(data)[:size]
    database.scan(cast(bytes, window), match_event_handler=hit, scratch=scratch(database))
    decided = _follow(state, data, 0, size) - 1 if state.following else -1
    for end in sorted(ends):
        if end <= decided:
            continue
        start = data.rfind(b"\n", 0, max(end - 1, 0)) + 1
        stop = data.find(b"\n", max(end - 1, 0), size)
        stop = size if stop == -1 else stop
        decided = stop
        read_line(state, start, bytes(data[start : min(stop, start + MAX_LINE_BYTES)]))
        if state.following:
            decided = _follow(state, data, stop + 1, size) - 1
    _number(state, data, size, last)


def _follow(state: _State, data: bytes | bytearray, start: int, size: int) -> int:
    """A cocotb failure record's traceback read on from `start`: its exception line, once read,
    is the first error in place of the record's line. The offset where the scan goes on (past
    the window while the traceback goes on in the next one)."""
    assert state.following is not None
    followed = tracebacks.follow(state.following, data, start, size)
    if followed.exception is not None:
        begin, stop = followed.exception
        raw = bytes(data[begin : min(stop, begin + MAX_LINE_BYTES)]).rstrip(b"\r")
        if state.provisional:
            state.first_error, state.pending_error = None, (begin, raw)
            state.first_error_raw = raw
    if not followed.done:
        return size + 1
    state.following, state.provisional = None, False
    return followed.end


def _number(state: _State, data: bytes | bytearray, size: int, last: bool) -> None:
    """Line numbers for what needs them, by one count of newlines in order."""
    wanted: list[tuple[int, int]] = []  # (offset, which: -1 the first error, else a statement)
    if state.pending_error is not None:
        wanted.append((state.pending_error[0], -1))
    if not last:
        wanted += [(offset, index) for index, (_, offset, _) in enumerate(state.pending)]
    elif state.verdict == "fail" and state.first_error is None and state.pending_error is None:
        index = (
            max(i for i, (said, _, _) in enumerate(state.pending) if said == "fail")
            if any(said == "fail" for said, _, _ in state.pending)
            else None
        )
        if index is not None:
            wanted.append((state.pending[index][1], index))
    line, counted = state.line, 0
    numbers: dict[int, int] = {}
    for offset, which in sorted(wanted):
        line += data.count(b"\n", counted, offset)
        counted = offset
        numbers[which] = line
    if state.pending_error is not None:
        offset, raw = state.pending_error
        state.first_error = _cite(state, numbers[-1], raw)
        state.pending_error = None
    state.statements += [
        (said, _cite(state, numbers[index], raw))
        for index, (said, _, raw) in enumerate(state.pending)
        if index in numbers
    ]
    state.pending = []
    if not last:
        state.line = line + data.count(b"\n", counted, size)


def read_line(state: _State, offset: int, raw: bytes) -> None:
    """One triggered line (at `offset` in its window), read by the rules (module docstring)."""
    _read_line(state, offset, raw)
    state.said.update(said for said, _, _ in state.pending[-1:])


def _read_line(state: _State, offset: int, raw: bytes) -> None:
    raw = raw.rstrip(b"\r")
    line = _PREFIX.sub(b"", raw, count=1)
    if _SUMMARY_START.match(line):
        state.in_summary = True
        return
    if count := _SEVERITY_COUNT.match(line):
        if state.in_summary and count[1] in (b"UVM_ERROR", b"UVM_FATAL"):
            state.pending.append(("fail" if int(count[2]) else "pass", offset, raw))
        return
    state.in_summary = False
    if not _error_line(state, offset, raw, line):
        _stated(state, offset, raw, line)


def _error_line(state: _State, offset: int, raw: bytes, line: bytes) -> bool:
    """Read a message line (UVM, Verilator, a simulator's, cocotb's): whether it was one."""
    if uvm := _MESSAGE.match(line):
        if uvm[1] in (b"UVM_ERROR", b"UVM_FATAL"):
            _error(state, offset, raw)
        return True
    if _VERILATOR.match(line):
        _error(state, offset, raw)
        state.pending.append(("fail", offset, raw))
        return True
    if (message := simmessages.read(line)) and (message.error or message.fails):
        if message.error:
            _error(state, offset, raw)
        if message.fails:
            state.pending.append(("fail", offset, raw))
        return True
    if tracebacks.RECORD.match(line):
        state.provisional = state.first_error is None and state.pending_error is None
        _error(state, offset, raw)
        state.pending.append(("fail", offset, raw))
        state.following = tracebacks.Following()
        return True
    if _COCOTB_ERROR.match(line):
        _error(state, offset, raw)
        return True
    return False


def _stated(state: _State, offset: int, raw: bytes, line: bytes) -> None:
    """Read a summary or a verdict line (cocotb's, pytest's, `TEST PASSED`)."""
    if cocotb := _COCOTB_SUMMARY.search(line):
        state.pending.append(("fail" if int(cocotb[3]) else "pass", offset, raw))
    elif pytest := _PYTEST.match(line):
        state.pending.append(("fail" if _PYTEST_FAILED.search(pytest[1]) else "pass", offset, raw))
    if verdict_line := _VERDICT.search(line):
        said: Verdict = "fail" if verdict_line[1].upper().startswith(b"FAIL") else "pass"
        state.pending.append((said, offset, raw))


def _error(state: _State, offset: int, raw: bytes) -> None:
    state.errors += 1
    if state.first_error is None and state.pending_error is None:
        state.pending_error = (offset, raw)
        state.first_error_raw = raw


def _cite(state: _State, number: int, raw: bytes) -> Cited:
    return Cited(state.member, number, raw[:MAX_KEPT_CHARS].decode("utf-8", "replace"))
