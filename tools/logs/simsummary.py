"""What a log's simulator lines and cocotb failure records say, gathered line by line for
`logsummary` by the grammar `triage` reads them with (`tools/logs/simmessages.py`,
`tools/logs/tracebacks.py`): so that the line `triage` fails a member on is the line `logsummary`
names.

Counted: each simulator message by tool and kind (`VCS Error-[NOA]`, `Xcelium *W,TRNEGDEL`,
`Questa ** Error`, `crash`). Named with its line: the first error of each kind, the first line
stating a failure, the run's last closing lines (an exit code, Questa's `Errors: N, Warnings: M`,
`$finish`, `$fatal`), and each cocotb failure record with its traceback's exception line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tools.excerpt import Line, make_line
from tools.logs import simmessages, tracebacks

MAX_KINDS = 200
"""Kinds counted one by one; messages of further kinds are counted together as `other`."""
MAX_FIRSTS = 20
"""First lines named: errors (one per kind), cocotb failures."""
MAX_CLOSING = 3
"""Closing lines kept (the last ones)."""
CLOSING_TOOLS = frozenset({"exit", "end"})


@dataclass(frozen=True)
class CocotbFailure:
    record: Line
    name: str
    exception: Line | None = None


@dataclass
class SimulatorFound:
    counts: Counter[str] = field(default_factory=Counter)
    firsts: dict[str, Line] = field(default_factory=dict)
    """The first error line of each kind."""
    failed_at: Line | None = None
    """The first line stating the run failed."""
    closing: list[Line] = field(default_factory=list)
    cocotb: list[CocotbFailure] = field(default_factory=list)
    cocotb_count: int = 0
    following: tracebacks.Following | None = None

    def read(self, number: int, raw: bytes, line: bytes) -> None:
        """One line of the log (`line`: without Questa's prefix)."""
        if self.following is not None and self._follow(number, raw):
            return
        if record := tracebacks.RECORD.match(line):
            self.cocotb_count += 1
            if len(self.cocotb) < MAX_FIRSTS:
                name = (record[3] or record[5]).decode("utf-8", "replace")
                self.cocotb.append(CocotbFailure(make_line(number, raw), name))
                self.following = tracebacks.Following()
            return
        if message := simmessages.read(line):
            self._message(message, make_line(number, raw))

    def _follow(self, number: int, raw: bytes) -> bool:
        """The line read as the current record's: whether it was one of its lines."""
        assert self.following is not None
        step = self.following.step(raw)
        if step == "exception":
            last = self.cocotb[-1]
            self.cocotb[-1] = CocotbFailure(last.record, last.name, make_line(number, raw))
        if step != "held":
            self.following = None
        return step != "ended"

    def _message(self, message: simmessages.Message, line: Line) -> None:
        if message.tool in CLOSING_TOOLS or message.kind.startswith("Errors:"):
            self.closing = [*self.closing[-(MAX_CLOSING - 1) :], line]
        else:
            key = message.kind if message.tool == "crash" else f"{message.tool} {message.kind}"
            self.counts[key if key in self.counts or len(self.counts) < MAX_KINDS else "other"] += 1
        if message.error and len(self.firsts) < MAX_FIRSTS:
            self.firsts.setdefault(message.kind, line)
        if message.fails and self.failed_at is None:
            self.failed_at = line

    def lines(self) -> list[Line]:
        """The lines named."""
        cocotb = [
            shown
            for failure in self.cocotb
            for shown in (failure.record, failure.exception)
            if shown is not None
        ]
        return [*self.firsts.values(), *self.closing, *cocotb]

    def parts(self) -> list[str]:
        """What the summary says of them."""
        parts = []
        if self.counts:
            counted = ", ".join(f"{kind} {count}" for kind, count in sorted(self.counts.items()))
            parts.append(f"simulator messages: {counted}")
        if self.firsts:
            firsts = ", ".join(f"{kind} line {line.number}" for kind, line in self.firsts.items())
            parts.append(f"simulator errors, the first of each: {firsts}")
        parts += [_failure(failure) for failure in self.cocotb]
        if self.cocotb_count > len(self.cocotb):
            parts.append(f"{self.cocotb_count - len(self.cocotb)} more cocotb failures not named")
        parts += [f"line {line.number}: {line.text.strip()}" for line in self.closing]
        return parts


def _failure(failure: CocotbFailure) -> str:
    said = f"cocotb: {failure.name} failed at line {failure.record.number}"
    if failure.exception is not None:
        said += (
            f", its exception at line {failure.exception.number}: {failure.exception.text.strip()}"
        )
    return said
