"""One member of a record family read once: its verdict as the log states it, its first error,
and that error's signature. The worker `triage` and `searchfamily` run in a process pool, so this
module imports nothing heavy (no pydantic, no NumPy): a worker starts in a few milliseconds.

A member is read through `tools/logs/memberfile.py` (its file opened once, gzip decompressed, a
pinned member proven the version admitted, or not read: that member's unknown).

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

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Literal, cast

import hyperscan

from tools.logs import simmessages, tracebacks
from tools.logs.memberfile import BINARY_PROBE, CHUNK_BYTES, NO_LIMITS, Unread, read_chunks
from tools.logs.memberfile import Limits as Limits
from tools.logs.memberfile import Member as Member
from tools.logs.signatures import cell_signature as cell_signature
from tools.logs.signatures import error_signature
from tools.logs.signatures import mask as mask
from tools.logs.signatures import member_test as member_test
from tools.stream.patterns import scratch

MAX_LINE_BYTES = 64 << 10
"""Of a triggered line, the bytes the rules read (as `tools.stream.lines` cuts a line)."""
MAX_KEPT_CHARS = 1000
"""Of a cited line, the characters kept in a member's result (an excerpt clips it further)."""

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
_COCOTB_ERROR = re.compile(simmessages.COCOTB_ERROR.encode())
_PYTEST = re.compile(rb"^=+ (.*\b(?:passed|failed|error|errors)\b.*) in [\d.]+s.*=+\s*$")
_PYTEST_FAILED = re.compile(rb"\b(?:failed|error|errors)\b")

TRIGGERS: tuple[tuple[bytes, int], ...] = (
    (rb"error", hyperscan.HS_FLAG_CASELESS),
    (rb"fatal", hyperscan.HS_FLAG_CASELESS),
    (rb"PASS", hyperscan.HS_FLAG_CASELESS),
    (rb"FAIL", hyperscan.HS_FLAG_CASELESS),
    (rb"UVM Report Summary", 0),
    (rb" CRITICAL", 0),
    (rb"\tCRITICAL", 0),
    *((re.escape(literal), 0) for literal in simmessages.TRIGGERS),
)
r"""What makes a line worth reading: literals, a superset of every rule's lines (each rule then
decides). `error` and `fatal` in any case hold UVM's `UVM_ERROR`/`UVM_FATAL`, Verilator's `%Error`,
cocotb's `ERROR` level, pytest's `error`, and the simulators' `Error-[…]`, `Error: "…"`,
`** Error`, `Errors: N`, `Fatal: "…"`, `** Fatal`, `$fatal`; `PASS` and `FAIL` in any case a
verdict line, cocotb's summary and failure record, pytest's `passed`/`failed` and Questa's
`** Failure`; a cocotb `CRITICAL` follows a space or a tab; the rest of the simulators' lines hold
one of `simmessages.TRIGGERS`. Literals only, few and of rare bytes where it can be (each one
slows the scan: `bench/triage.py`): Hyperscan runs them at several GB/s, where a regex such as
`(?i)TEST\s+PASS` fires on every `uvm_test_top`."""


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
    cases: tuple[MemberScan, ...] = ()
    """A JUnit member's testcases, each a test of its own (`tools/logs/junit.py`)."""


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
