"""logsummary: what a simulation log says of itself, in one pass.

Every UVM report summary (counts by severity and by report id, as the report server printed
them), each named with its line and its run (the n-th summary, and the test its run's `Running
test` line names): a transcript may hold several runs, each closed by its own summary. Beside them,
the message lines counted in the log, over the whole log and run by run; the first `UVM_ERROR` and
`UVM_FATAL` of each report id, with line numbers; the test's verdict line, quoted, never inferred;
and, where present, a Verilator (`%Error`/`%Warning`), cocotb (`** TESTS=… PASS=… FAIL=…`) or
pytest summary line. The commercial simulators' messages (VCS, Xcelium, Questa), crashes and exits,
and cocotb's failure records with their tracebacks' exception lines, as `triage` reads them
(`tools/logs/simsummary.py`): each message counted by kind, the first error of each kind and the
run's closing lines named, and, with no verdict line, the first line where the simulator states
the run failed. Questa's `# ` transcript prefix is read through. A log with none of these says so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scenario.reading import open_record
from scenario.registry import Record
from tools.args import LogId, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.logs import simmessages
from tools.logs.simsummary import SimulatorFound
from tools.stream.lines import iter_lines

MAX_IDS = 1000
"""Report ids counted one by one; messages of further ids are counted together."""
MAX_ID_CHARS = 200
"""Of a report id, the characters kept as its key."""
MAX_FIRSTS = 20
"""First error lines shown (one per severity and report id)."""
MAX_SUMMARY_LINES = 80
"""Lines of one UVM report summary block kept."""
MAX_SUMMARIES = 20
"""UVM report summaries named; further ones are counted."""
MAX_SHOWN_SUMMARY_LINES = 200
"""Summary lines shown in all; a block past this is shown by its first line only."""

_PREFIX = re.compile(simmessages.TRANSCRIPT_PREFIX.encode())
_TEXT_PREFIX = re.compile(simmessages.TRANSCRIPT_PREFIX)
_MESSAGE = re.compile(
    rb"^(UVM_(?:INFO|WARNING|ERROR|FATAL)) (?:(?:[^@]|@(?! ))*? )?@ [^:]*: \S* \[([^\]]*)\]"
)
"""`UVM_INFO file(line) @ time: reporter [ID] message` (the file is optional): the id is all
between the brackets after the reporter, spaces included (`[Questa UVM]`), or empty (`[]`). Each
repeat stops at a byte it cannot take (the first `@ `, `:`, space, `]`), so a line is matched in
time linear in its length, whatever it holds."""
_RUNNING = re.compile(rb"Running test ([\w$:]+)")
"""The test named by the report server's `[RNTST] Running test NAME...` line."""
_SUMMARY_START = re.compile(rb"^-+ UVM Report Summary -+\s*$")
_SEVERITY_COUNT = re.compile(rb"^(UVM_(?:INFO|WARNING|ERROR|FATAL))\s*:\s*(\d+)\s*$")
_ID_COUNT = re.compile(rb"^\[[^\]]*\]\s+\d+\s*$")
"""A count by id; `[]    10` counts messages reported with an empty id."""
_SECTION = re.compile(rb"^\*\* Report counts by (severity|id)\s*$")
_VERDICT = re.compile(rb"\b(?:TEST|SIMULATION)\s+(?:PASSED|FAILED|PASS|FAIL)\b", re.IGNORECASE)
_VERILATOR = re.compile(rb"^(?:\[[\d.]+\] )?%(Error|Warning)(?:-[\w]+)?:")
"""Also after a run's simulation time (`[50] %Error: … Assertion failed`), as triage reads it."""
_COCOTB = re.compile(rb"\*\* TESTS=(\d+) PASS=(\d+) FAIL=(\d+) SKIP=(\d+)")
_PYTEST = re.compile(rb"^=+ (.*\b(?:passed|failed|error|errors)\b.*) in [\d.]+s.*=+\s*$")
SEVERITIES = ("UVM_INFO", "UVM_WARNING", "UVM_ERROR", "UVM_FATAL")


class LogSummaryArgs(ToolArgs):
    path: LogId
    """The exact id of an approved `log` record."""


@dataclass
class _Summary:
    """One UVM report summary block and the run it closes (from `first` to the block)."""

    lines: list[Line]
    """The block as printed (its first line is `--- UVM Report Summary ---`)."""
    first: int
    """The run's first line: the log's, or the one after the summary before."""
    test: Line | None
    """The run's last `Running test` line."""
    counted: Counter[str]
    """Message lines of the run by severity, as counted in the log."""
    reported: dict[str, int] = field(default_factory=dict)
    """Counts by severity in the block."""
    left_out: int = 0
    """Its lines past `MAX_SUMMARY_LINES`."""

    @property
    def number(self) -> int:
        return self.lines[0].number


@dataclass
class _Found:
    counted: Counter[str] = field(default_factory=Counter)
    """Message lines by severity, counted over the whole log."""
    run: Counter[str] = field(default_factory=Counter)
    """Message lines of the run being read (since the last summary)."""
    run_first: int = 1
    test: Line | None = None
    """The `Running test` line of the run being read."""
    ids: int = 0
    firsts: dict[tuple[str, str], Line] = field(default_factory=dict)
    """The first `UVM_ERROR`/`UVM_FATAL` line of each report id."""
    summaries: list[_Summary] = field(default_factory=list)
    """The first `MAX_SUMMARIES` UVM report summary blocks, in order."""
    more_summaries: int = 0
    """Blocks after those, counted."""
    last_summary: int = 0
    """The line of the last of them."""
    verdict: Line | None = None
    """The last verdict line."""
    tools: list[Line] = field(default_factory=list)
    """The last cocotb and pytest summary lines."""
    verilator: Counter[str] = field(default_factory=Counter)
    verilator_first: dict[str, Line] = field(default_factory=dict)
    simulator: SimulatorFound = field(default_factory=SimulatorFound)


def run(args: LogSummaryArgs, records: Mapping[str, Record]) -> Excerpt:
    """What an approved simulation log says of itself: the UVM report summary, the first
    UVM_ERROR/UVM_FATAL per report id, the verdict line, Verilator/cocotb/pytest summaries."""
    with open_record(records["path"]) as stream:
        found = _scan(iter_lines(stream))
    summary_lines, cut = _summary_lines(found.summaries)
    lines = sorted(
        {
            line.number: line
            for line in [
                *summary_lines,
                *list(found.firsts.values())[:MAX_FIRSTS],
                *found.verilator_first.values(),
                *found.simulator.lines(),
                *found.tools,
                *([found.verdict] if found.verdict else []),
            ]
        }.values(),
        key=lambda line: line.number,
    )
    truncated = cut or len(found.firsts) > MAX_FIRSTS or found.more_summaries > 0
    return make_excerpt(_summary(found), lines, truncated=truncated)


def _summary_lines(summaries: list[_Summary]) -> tuple[list[Line], bool]:
    """Each block with its run's `Running test` line, while `MAX_SHOWN_SUMMARY_LINES` lasts;
    then a block's first line only. True when a block was cut."""
    shown: list[Line] = []
    cut = False
    budget = MAX_SHOWN_SUMMARY_LINES
    for summary in summaries:
        block = summary.lines if len(summary.lines) <= budget else summary.lines[:1]
        cut = cut or len(block) < len(summary.lines) or summary.left_out > 0
        budget -= len(block)
        shown += [*block, *([summary.test] if summary.test else [])]
    return shown, cut


def _scan(numbered: Iterable[tuple[int, bytes]]) -> _Found:
    found = _Found()
    block: _Summary | None = None  # the summary block being read
    section = b""
    for number, raw in numbered:
        line = _PREFIX.sub(b"", raw, count=1)
        if _SUMMARY_START.match(line):
            if block is not None:
                _close(block, found, number)
            block, section = (
                _Summary([make_line(number, raw)], found.run_first, found.test, found.run),
                b"",
            )
            continue
        if block is not None:
            if not line.strip() or _in_summary(line, section, block):
                section = match[1] if (match := _SECTION.match(line)) else section
                if len(block.lines) < MAX_SUMMARY_LINES:
                    block.lines.append(make_line(number, raw))
                else:
                    block.left_out += 1
                continue
            _close(block, found, number)  # its first other line ends it
            block = None
        found.simulator.read(number, raw, line)
        _message(number, raw, line, found)
    if block is not None:
        _close(block, found, None)
    return found


def _close(block: _Summary, found: _Found, after: int | None) -> None:
    """The block is read: named (or counted past `MAX_SUMMARIES`); the next run starts at line
    `after` (None: the log ended)."""
    _trim(block.lines)
    if len(found.summaries) < MAX_SUMMARIES:
        found.summaries.append(block)
    else:
        found.more_summaries, found.last_summary = found.more_summaries + 1, block.number
    found.run, found.test = Counter(), None
    found.run_first = after or found.run_first


def _trim(block: list[Line]) -> None:
    """The block without its trailing blank lines (a transcript's bare `#` is blank)."""
    while len(block) > 1 and not _TEXT_PREFIX.sub("", block[-1].text).strip():
        block.pop()


def _in_summary(line: bytes, section: bytes, block: _Summary) -> bool:
    """Whether the line belongs to the summary block being read (and count it if it does).
    Severity counts may come straight after the block's first line, with no section heading."""
    if _SECTION.match(line):
        return True
    if section in (b"", b"severity") and (match := _SEVERITY_COUNT.match(line)):
        block.reported[match[1].decode()] = int(match[2])
        return True
    return section == b"id" and _ID_COUNT.match(line) is not None


def _message(number: int, raw: bytes, line: bytes, found: _Found) -> None:
    if match := _MESSAGE.match(line):
        severity = match[1].decode()
        found.counted[severity] += 1
        found.run[severity] += 1
        report = match[2][:MAX_ID_CHARS].decode("utf-8", "replace")
        if report == "RNTST" and _RUNNING.match(line, match.end() + 1):
            found.test = make_line(number, raw)
        key = (severity, report)
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
    parts = _summaries(found)
    if found.counted:
        runs = len(found.summaries) + found.more_summaries
        over = f" ({runs} runs)" if runs > 1 else ""
        parts.append(f"message lines counted over the whole log{over}: {_counts(found.counted)}")
    if found.firsts:
        firsts = ", ".join(
            f"{severity} [{report}] line {line.number}"
            for (severity, report), line in list(found.firsts.items())[:MAX_FIRSTS]
        )
        parts.append(f"first error per report id: {firsts}")
    if found.verilator:
        parts.append(
            "Verilator: "
            + ", ".join(f"{kind} {count}" for kind, count in sorted(found.verilator.items()))
        )
    parts += found.simulator.parts()
    for line in found.tools:
        parts.append(f"line {line.number}: {line.text.strip()}")
    if found.verdict:
        parts.append(f"verdict line {found.verdict.number}: {found.verdict.text.strip()!r}")
    elif failed := found.simulator.failed_at:
        parts.append(f"no verdict line; the simulator states a failure at line {failed.number}")
    elif parts:
        parts.append("no verdict line found")
    return (
        "; ".join(parts)
        if parts
        else "no summary found (no UVM, Verilator, cocotb or pytest summary, no verdict line)"
    )


def _summaries(found: _Found) -> list[str]:
    """Each UVM report summary with its line, its run and its counts; with several, what was
    counted in each one's run beside what it reports."""
    total = len(found.summaries) + found.more_summaries
    if total == 1:
        (only,) = found.summaries
        test = f" ({_test(only)})" if only.test else ""
        return [f"UVM report summary at line {only.number}{test}: {_reported(only)}"]
    parts = [
        f"UVM report summary {index} of {total} at line {summary.number} ({_test(summary)}):"
        f" {_reported(summary)} (counted in {_span(summary)}: {_counts(summary.counted)})"
        for index, summary in enumerate(found.summaries, 1)
    ]
    if found.more_summaries:
        parts.append(
            f"{found.more_summaries} more UVM report summaries not named, the last at line {found.last_summary}"
        )
    return parts


def _test(summary: _Summary) -> str:
    if summary.test is None:
        return "no `Running test` line"
    match = _RUNNING.search(summary.test.text.encode())
    name = match[1].decode() if match else "?"
    return f"test {name} at line {summary.test.number}"


def _span(summary: _Summary) -> str:
    """The lines of its run before it."""
    first, last = summary.first, summary.number - 1
    return (
        f"lines {first}–{last}" if last > first else f"line {last}" if last == first else "no line"
    )


def _reported(summary: _Summary) -> str:
    reported = ", ".join(
        f"{name} {summary.reported[name]}" for name in SEVERITIES if name in summary.reported
    )
    return reported or "no counts"


def _counts(counted: Counter[str]) -> str:
    return ", ".join(f"{name} {counted[name]}" for name in SEVERITIES)
