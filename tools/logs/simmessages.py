"""The commercial simulators' own messages, as their logs print them, and what each says of the
run. `triage` (`tools/logs/familyscan.py`) and `logsummary` read a line through `read`, and a
failure's signature reduces a message through `shape`: one grammar for both, so that a line that
fails a member in `triage` is the line `logsummary` names.

A line is read without Questa's `# ` transcript prefix (the caller drops it):

- **VCS**: a message block's first line, `Error-[NOA] Null object access` (its id in brackets, its
  title after; the file, line and text follow on the next lines), is an *error* and states *fail*;
  `Warning-[…]`, `Lint-[…]`, `Note-[…]`, `Info-[…]` are not. A severity task's line,
  `Error: "tb.sv", 26: tb.chk: at time 40 ns` (`$error`) or `Fatal: "…", …` (`$fatal`), is an
  error and states fail.
- **Xcelium and Incisive**: `xmsim: *E,ASRTST (file,line|col): text` (any tool before the colon:
  `xrun`, `xmelab`, `ncsim`, …) is an error and states fail at severity `E`, `SE` (severe) and `F`
  (fatal); `*W` and `*N` are not.
- **Questa**: `** Error: …`, `** Error (suppressible): …`, `** Fatal: …`, `** Failure: …` are
  errors and state fail; `** Warning`/`** Note`/`** Info` are not. Its closing count,
  `Errors: 2, Warnings: 0`, states fail when it counts an error, and nothing when it counts none
  (the simulator's own messages are not the test's verdict).
- **A crash**: `An unexpected termination has occurred in ./simv due to a signal: Segmentation
  fault` (VCS), `… (core dumped)` (the shell's), or `Fatal…Segmentation fault`, is an error and
  states fail.
- **An exit**: `Execution of simv exited with code 1` states fail when the code is not 0;
  `Simulation terminated via $fatal(1) …` (Xcelium) states fail.
- **An end**: `$finish at simulation time …` (VCS), `Simulation complete via $finish(1) …`
  (Xcelium), `** Note: $finish …` (Questa) say where the run ended, and nothing of its verdict.

Shapes were read in public logs and tool output (`tests/data/SOURCES.md`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VCS_BLOCK = r"^(Error|Warning|Lint|Note|Info)-\[([^\]\s]+)\][ \t]*(.*?)\s*$"
_VCS_TASK = r'^(Error|Fatal|Warning|Info): "([^"]*)", (\d+): (.*?)\s*$'
_XCELIUM = r"^([\w.]+): \*(E|SE|F|W|N),(\w+)\b:?[ \t]*(.*?)\s*$"
_QUESTA = r"^\*\* (Error|Fatal|Failure|Warning|Note|Info)( \(suppressible\))?:[ \t]*(.*?)\s*$"
_QUESTA_END = r"^Errors: (\d+), Warnings: (\d+)"
_CRASH = (
    r"An unexpected termination has occurred\b|\(core dumped\)|^Fatal\b.*\bSegmentation fault\b"
)
_EXIT = r"\bExecution of (\S+) exited with code (-?\d+)"
_FATAL_STOP = r"^Simulation terminated via \$fatal\b"
_END = r"^\$finish at simulation time\b|^Simulation complete via \$finish\b|^\*\* Note: \$finish\b"

TRANSCRIPT_PREFIX = r"^# ?"
"""Questa's transcript prefix, which a reader drops before it reads a line."""
COCOTB_ERROR = r"^[ \t]*\d+(?:\.\d+)?[ \t]*(?:fs|ps|ns|us|ms|s|step)?[ \t]+(ERROR|CRITICAL)[ \t]+(\S+)[ \t]*(.*)$"
"""A cocotb log's error line (time, unit, level, logger, text): one pattern text for a family's
scan (bytes) and a failure's signature (text)."""

FAILING = frozenset({"Error", "Fatal", "Failure", "E", "SE", "F"})
"""The severities whose message is an error and states the run failed."""

TRIGGERS: tuple[bytes, ...] = (
    b"*E,",
    b"*SE,",
    b"*F,",
    b"An unexpected",
    b"(core dumped)",
    b"xited w",
)
"""Literals for a scan that reads only the lines a literal fires on: with `error`, `fatal` and
`fail` in any case (which a log scan holds for its other rules), a superset of the lines `read`
finds failing. Picked for scan speed (`exited with code` costs the scan four times what `xited w`
does); the end of a run, which states nothing, is not among them."""


def _both(pattern: str) -> tuple[re.Pattern[bytes], re.Pattern[str]]:
    return re.compile(pattern.encode()), re.compile(pattern)


VCS_BLOCK, VCS_BLOCK_TEXT = _both(_VCS_BLOCK)
VCS_TASK, VCS_TASK_TEXT = _both(_VCS_TASK)
XCELIUM, XCELIUM_TEXT = _both(_XCELIUM)
QUESTA, QUESTA_TEXT = _both(_QUESTA)
QUESTA_END = re.compile(_QUESTA_END.encode())
CRASH, CRASH_TEXT = _both(_CRASH)
EXIT = re.compile(_EXIT.encode())
FATAL_STOP = re.compile(_FATAL_STOP.encode())
END = re.compile(_END.encode())
_LOCATION = re.compile(r"^\([^()]*\):?\s*")
"""Xcelium's `(file,line|col):` before a message's text."""
_XCELIUM_TIME = re.compile(r"^\(time [^)]*\)\.?\s*")
"""Xcelium's `(time 14985 NS)` before a message's text."""
_VCS_TIME = re.compile(r":? at time .*$")
"""VCS's `: at time 40 ns` after a severity task's scope."""


@dataclass(frozen=True)
class Message:
    """One simulator line, read."""

    tool: str
    """`VCS`, `Xcelium`, `Questa`, or `crash`, `exit`, `end` (whichever tool printed it)."""
    kind: str
    """What it is counted as: `Error-[NOA]`, `Error` (a VCS severity task), `*E,ASRTST`,
    `** Error`, `Errors: 2`, `crash`, `exit code 1`, `$fatal`, `$finish`."""
    error: bool
    """An error line: the first one is a failure's line and signature."""
    fails: bool
    """The line states the run failed."""


def read(line: bytes) -> Message | None:
    """The simulator message this line is (module docstring), or None."""
    if found := VCS_BLOCK.match(line):
        return _message("VCS", f"{found[1].decode()}-[{found[2].decode()}]", found[1])
    if found := VCS_TASK.match(line):
        return _message("VCS", found[1].decode(), found[1])
    if found := XCELIUM.match(line):
        return _message("Xcelium", f"*{found[2].decode()},{found[3].decode()}", found[2])
    if found := QUESTA.match(line):
        return _message("Questa", f"** {found[1].decode()}", found[1])
    if found := QUESTA_END.match(line):
        errors = int(found[1])
        return Message("Questa", f"Errors: {errors}", error=False, fails=errors > 0)
    if CRASH.search(line):
        return Message("crash", "crash", error=True, fails=True)
    if found := EXIT.search(line):
        code = int(found[2])
        return Message("exit", f"exit code {code}", error=False, fails=code != 0)
    if FATAL_STOP.match(line):
        return Message("exit", "$fatal", error=False, fails=True)
    if END.match(line):
        return Message("end", "$finish", error=False, fails=False)
    return None


def _message(tool: str, kind: str, severity: bytes) -> Message:
    failing = severity.decode() in FAILING
    return Message(tool, kind, error=failing, fails=failing)


def shape(text: str) -> str | None:
    """A simulator's error line reduced to what names the failure (file, line and time out, as a
    UVM message loses them): `*E,ASRTST: Assertion top.a has failed` for Xcelium's line,
    `Error: tb.chk` for VCS's `$error` line; a VCS block's first line, a Questa message or a
    crash line as it is. None for any other text."""
    if found := XCELIUM_TEXT.match(text):
        rest = _XCELIUM_TIME.sub("", _LOCATION.sub("", found[4])).strip()
        return f"*{found[2]},{found[3]}" + (f": {rest}" if rest else "")
    if found := VCS_TASK_TEXT.match(text):
        return f"{found[1]}: {_VCS_TIME.sub('', found[4])}".strip()
    if VCS_BLOCK_TEXT.match(text) or QUESTA_TEXT.match(text) or CRASH_TEXT.search(text):
        return text
    return None
