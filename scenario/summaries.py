"""A regression's own summary, told apart from a log when a folder is drafted (`draft.py`).

A nightly folder often holds, beside its tests' logs, the regression's own summary: a line per
test with its status (`FAIL: dma_burst_7 - no PASS or FAIL`, `dma_burst_7  1234  FAILED`), as
text or as an `.rpt` table. Drafted as a log it becomes a family of its own that triage reads for
verdicts it never states, spending the evidence budget; drafted as an STA report it is named for
what it is not. A `.txt` or `.rpt` file is read as such a summary when, in its first 64 KiB, at
least two lines and at least half of the lines that hold a word (rules of `-`, `=`, `+`, `|` are
not counted) name a status in capitals as a word of their own (`PASS`, `FAILED`, `TIMEOUT`, …): a
simulation log prints far more than its verdicts, and an STA report states slack, never PASS or
FAIL.

The regression's other report, a JUnit XML file (`results.xml`), is told apart here too, by its
root (`junit_report`): it is a member of the nightly's logs, read testcase by testcase.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

HEAD = 64 * 1024
"""Bytes of a file read to tell what it is."""
SNIFFED = (".txt", ".rpt")
"""Suffixes a summary may have: `.log` is a log and `.sta` a timing report, whatever they hold."""
STATUS = re.compile(
    r"(?<![\w-])(?:PASS(?:ED)?|FAIL(?:ED|URE)?|TIMED? ?OUT|KILLED|SKIP(?:PED)?)(?![\w-])"
)
"""A status in capitals, as a word of its own: `Assertion failed` is a log's prose."""
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Summary:
    """What a file's head showed: lines naming a status, of the lines that hold a word."""

    status_lines: int
    lines: int

    def __str__(self) -> str:
        return f"a test status on {self.status_lines} of its {self.lines} lines"


def summary_of(path: Path) -> Summary | None:
    """The file read as a regression's summary, or None (a log, a report, or unreadable)."""
    if path.name.removesuffix(".gz").lower().endswith(SNIFFED):
        return read_as_summary(_head(path))
    return None


def read_as_summary(head: str) -> Summary | None:
    """`head` (a file's first lines) as a summary, when its lines are mostly statuses."""
    worded = [line for line in head.splitlines() if _WORD.search(line)]
    statuses = sum(1 for line in worded if STATUS.search(line))
    if statuses >= 2 and 2 * statuses >= len(worded):
        return Summary(statuses, len(worded))
    return None


def _head(path: Path) -> str:
    """The first `HEAD` bytes as text (decompressed for `.gz`), its last partial line dropped;
    empty when unreadable (the file is then drafted by its suffix, and admission says more)."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as packed:
                raw = packed.read(HEAD)
        else:
            with path.open("rb") as plain:
                raw = plain.read(HEAD)
    except (OSError, EOFError, zlib.error):
        return ""
    if len(raw) == HEAD:
        raw = raw[: raw.rfind(b"\n") + 1]
    return raw.decode("utf-8", "replace")


_JUNIT_ROOT = re.compile(
    rb"^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<testsuites?[\s>/]", re.DOTALL
)
"""The start of a JUnit report: an optional XML declaration and comments, then its root."""


def junit_report(path: Path) -> bool:
    """Whether an `.xml` (or `.xml.gz`) file opens as a JUnit report (`<testsuites>` or
    `<testsuite>` its root): drafted as a member of the nightly's logs, any other XML left alone."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            head = handle.read(HEAD)
    except (OSError, EOFError):
        return False
    return bool(_JUNIT_ROOT.match(head.removeprefix(b"\xef\xbb\xbf")))
