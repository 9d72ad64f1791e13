"""A cocotb test's failure record and the traceback after it: the line that names the failure.

cocotb logs a failed test as one record: `<time> <LEVEL> cocotb.regression <test> failed[: why]`
(cocotb 1.6 to 1.9 at `INFO`, 2.0 at `WARNING`, where `<test>` is `module.test_x`), or, before
1.6, `<time> ERROR cocotb.regression Test Failed: <test> (result was AssertionError)`. The
exception's traceback follows on the next lines, each indented to the message's column:

     91.00ns WARNING  cocotb.regression   counter_tests.test_self_checking failed
                                          Traceback (most recent call last):
                                            File "counter_tests.py", line 53, in test_self_checking
                                              assert dut.count.value == expected_value
                                          AssertionError: assert LogicArray(...) == 256
                                           +  where LogicArray(...) = ...

The failure's line is the traceback's **exception line**: the first line after `Traceback (most
recent call last):` back at its indentation (frames and code are indented further, pytest's
` +  where` lines too); with chained exceptions, the first one printed (the cause). A record whose
next line is not a traceback, or whose traceback ends (a line indented less: the next record)
before an exception line, has none: the record is its own failure's line. The test's name is in
the record, never in a signature (`signature`'s `<test>`), so one assertion failing in three tests
is one failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_RECORD = (
    r"^[ \t]*(?:\d+(?:\.\d+)?|-\.--)[ \t]*(?:fs|ps|ns|us|ms|s|step)?[ \t]+(INFO|WARNING|ERROR)"
    r"[ \t]+(cocotb(?:\.regression)?)[ \t]+(?:Test Failed: (\S+)(.*)|(\S+) failed\b(.*))$"
)
RECORD = re.compile(_RECORD.encode())
RECORD_TEXT = re.compile(_RECORD)
TRACEBACK = b"Traceback (most recent call last):"
MAX_FOLLOWED = 2000
"""Lines of a record read looking for its exception line; past them, it has none."""


def shape(text: str) -> str | None:
    """A failure record reduced to its level, logger and rest, the failing test's own name
    `<test>` whatever it is (`cocotb.regression <test> failed`); None for any other text."""
    if found := RECORD_TEXT.match(text):
        if found[3] is not None:
            return f"{found[1]} {found[2]} Test Failed: <test>{found[4]}"
        return f"{found[1]} {found[2]} <test> failed{found[6]}"
    return None


Step = Literal["held", "exception", "ended"]
"""A line of the record (its traceback's, read), its exception line, or a line past its end
(not the record's: read it as any other)."""


@dataclass
class Following:
    """A record whose traceback is being read, a line at a time (maybe across windows)."""

    base: int = -1
    """The traceback line's indentation; -1 until the line after the record is seen."""
    lines: int = 0

    def step(self, line: bytes) -> Step:
        """The record's next line read (module docstring)."""
        line = line.rstrip(b"\r")
        text = line.lstrip(b" \t")
        indent = len(line) - len(text)
        self.lines += 1
        if self.base < 0:
            if not text.startswith(TRACEBACK):
                return "ended"
            self.base = indent
        elif (text and indent < self.base) or self.lines > MAX_FOLLOWED:
            return "ended"
        elif text and indent == self.base and not text.startswith(TRACEBACK):
            return "exception"
        return "held"


@dataclass(frozen=True)
class Followed:
    end: int
    """The offset after the record's lines read (where the scan goes on)."""
    exception: tuple[int, int] | None = None
    """The exception line's start and end offsets."""
    done: bool = True
    """False: the window ended first (read on in the next one)."""


def follow(following: Following, data: bytes | bytearray, start: int, size: int) -> Followed:
    """Read the record's next lines in `data[start:size]` (whole lines) up to its exception line
    or its end."""
    offset = start
    while offset < size:
        stop = data.find(b"\n", offset, size)
        stop = size if stop == -1 else stop
        step = following.step(bytes(data[offset:stop]))
        if step == "ended":
            return Followed(offset)
        if step == "exception":
            return Followed(stop + 1, (offset, stop))
        offset = stop + 1
    return Followed(size, done=False)
