"""logsummary: what a simulation log says of itself, in one pass.

The UVM report summary (counts by severity and by report id, as the report server printed them)
beside the message lines counted in the log; the first `UVM_ERROR` and `UVM_FATAL` of each report
id, with line numbers; the test's verdict line, quoted, never inferred; and, where present, a
Verilator (`%Error`/`%Warning`), cocotb (`** TESTS=… PASS=… FAIL=…`) or pytest summary line.
Questa's `# ` transcript prefix is read through. A log with none of these says so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tools.args import RecordId, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.lines import iter_lines
from tools.reading import open_record
from tools.records import Record

MAX_IDS = 1000
"""Report ids counted one by one; messages of further ids are counted together."""
MAX_FIRSTS = 20
"""First error lines shown (one per severity and report id)."""
MAX_SUMMARY_LINES = 80
"""Lines of the UVM report summary block shown."""

_PREFIX = re.compile(rb"^# ?")
"""Questa's transcript prefix."""
_TEXT_PREFIX = re.compile(r"^# ?")
_MESSAGE = re.compile(rb"^(UVM_(?:INFO|WARNING|ERROR|FATAL))\b.*?: \S+ \[([^\]\s]+)\]")
_SUMMARY_START = re.compile(rb"^-+ UVM Report Summary -+\s*$")
_SEVERITY_COUNT = re.compile(rb"^(UVM_(?:INFO|WARNING|ERROR|FATAL))\s*:\s*(\d+)\s*$")
_ID_COUNT = re.compile(rb"^\[([^\]]+)\]\s+(\d+)\s*$")
_SECTION = re.compile(rb"^\*\* Report counts by (severity|id)\s*$")
_VERDICT = re.compile(rb"\b(?:TEST|SIMULATION)\s+(?:PASSED|FAILED|PASS|FAIL)\b", re.IGNORECASE)
_VERILATOR = re.compile(rb"^%(Error|Warning)(?:-[\w]+)?:")
_COCOTB = re.compile(rb"\*\* TESTS=(\d+) PASS=(\d+) FAIL=(\d+) SKIP=(\d+)")
_PYTEST = re.compile(rb"^=+ (.*\b(?:passed|failed|error|errors)\b.*) in [\d.]+s.*=+\s*$")
SEVERITIES = ("UVM_INFO", "UVM_WARNING", "UVM_ERROR", "UVM_FATAL")


class LogSummaryArgs(ToolArgs):
    path: RecordId
    """The exact id of an approved `log` record."""


@dataclass
class _Found:
    counted: Counter[str] = field(default_factory=Counter)
    """Message lines by severity, as counted in the log."""
    ids: int = 0
    firsts: dict[tuple[str, str], Line] = field(default_factory=dict)
    """The first `UVM_ERROR`/`UVM_FATAL` line of each report id."""
    summary: list[Line] = field(default_factory=list)
    """The last UVM report summary block, as printed."""
    reported: dict[str, int] = field(default_factory=dict)
    """Counts by severity in that block."""
    verdict: Line | None = None
    """The last verdict line."""
    tools: list[Line] = field(default_factory=list)
    """The last cocotb and pytest summary lines."""
    verilator: Counter[str] = field(default_factory=Counter)
    verilator_first: dict[str, Line] = field(default_factory=dict)


def run(args: LogSummaryArgs, records: Mapping[str, Record]) -> Excerpt:
    with open_record(records["path"]) as stream:
        found = _scan(iter_lines(stream))
    lines = sorted(
        {
            line.number: line
            for line in [
                *found.summary,
                *list(found.firsts.values())[:MAX_FIRSTS],
                *found.verilator_first.values(),
                *found.tools,
                *([found.verdict] if found.verdict else []),
            ]
        }.values(),
        key=lambda line: line.number,
    )
    return make_excerpt(_summary(found), lines, truncated=len(found.firsts) > MAX_FIRSTS)


def _scan(numbered: Iterable[tuple[int, bytes]]) -> _Found:
    found = _Found()
    block: list[Line] | None = None  # the summary block being read
    section = b""
    for number, raw in numbered:
        line = _PREFIX.sub(b"", raw, count=1)
        if _SUMMARY_START.match(line):
            block, section, found.reported = [make_line(number, raw)], b"", {}
            continue
        if block is not None:
            if not line.strip() or _in_summary(line, section, found):
                section = match[1] if (match := _SECTION.match(line)) else section
                if len(block) < MAX_SUMMARY_LINES:
                    block.append(make_line(number, raw))
                continue
            found.summary, block = _trimmed(block), None  # its first other line ends it
        _message(number, raw, line, found)
    if block is not None:
        found.summary = _trimmed(block)
    return found


def _trimmed(block: list[Line]) -> list[Line]:
    """The block without its trailing blank lines (a transcript's bare `#` is blank)."""
    while block and not _TEXT_PREFIX.sub("", block[-1].text).strip():
        block.pop()
    return block


def _in_summary(line: bytes, section: bytes, found: _Found) -> bool:
    """Whether the line belongs to the summary block being read (and count it if it does)."""
    if _SECTION.match(line):
        return True
    if section == b"severity" and (match := _SEVERITY_COUNT.match(line)):
        found.reported[match[1].decode()] = int(match[2])
        return True
    return section == b"id" and _ID_COUNT.match(line) is not None


def _message(number: int, raw: bytes, line: bytes, found: _Found) -> None:
    if match := _MESSAGE.match(line):
        severity = match[1].decode()
        found.counted[severity] += 1
        key = (severity, match[2].decode("utf-8", "replace"))
        failing = severity in ("UVM_ERROR", "UVM_FATAL")
        if failing and key not in found.firsts and found.ids < MAX_IDS:
            found.firsts[key] = make_line(number, raw)
            found.ids += 1
        return
    if match := _VERILATOR.match(line):
        kind = f"%{match[1].decode()}"
        found.verilator[kind] += 1
        found.verilator_first.setdefault(kind, make_line(number, raw))
        return
    if _COCOTB.search(line) or _PYTEST.match(line):
        found.tools = [*found.tools[-1:], make_line(number, raw)]
    if _VERDICT.search(line):
        found.verdict = make_line(number, raw)


def _summary(found: _Found) -> str:
    parts = []
    if found.summary:
        reported = ", ".join(f"{name} {found.reported[name]}" for name in SEVERITIES if name in found.reported)  # fmt: skip
        parts.append(
            f"UVM report summary at line {found.summary[0].number}: {reported or 'no counts'}"
        )
    if found.counted:
        counted = ", ".join(f"{name} {found.counted[name]}" for name in SEVERITIES)
        parts.append(f"message lines counted in the log: {counted}")
    if found.firsts:
        firsts = ", ".join(f"{severity} [{report}] line {line.number}" for (severity, report), line in list(found.firsts.items())[:MAX_FIRSTS])  # fmt: skip
        parts.append(f"first error per report id: {firsts}")
    if found.verilator:
        parts.append("Verilator: " + ", ".join(f"{kind} {count}" for kind, count in sorted(found.verilator.items())))  # fmt: skip
    for line in found.tools:
        parts.append(f"line {line.number}: {line.text.strip()}")
    if found.verdict:
        parts.append(f"verdict line {found.verdict.number}: {found.verdict.text.strip()!r}")
    elif parts:
        parts.append("no verdict line found")
    return "; ".join(parts) if parts else "no summary found (no UVM, Verilator, cocotb or pytest summary, no verdict line)"  # fmt: skip
