"""An independent reference for `triage`: plain Python `re` over each member's whole text,
written from the rules in `tools/logs/familyscan.py`'s and `tools/logs/triage.py`'s docstrings,
importing nothing from `tools/`. Slow and simple on purpose: every line is read, no trigger, no
pool, no chunks.
"""

from __future__ import annotations

import csv
import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PREFIX = re.compile(r"^# ?")
SUMMARY = re.compile(r"^-+ UVM Report Summary -+\s*$")
COUNT = re.compile(r"^UVM_(INFO|WARNING|ERROR|FATAL)\s*:\s*(\d+)\s*$")
UVM = re.compile(r"^UVM_(INFO|WARNING|ERROR|FATAL) (.*? )?@ [^:]*: \S* \[([^\]]*)\]\s*(.*)$")
UVM_WRITTEN = re.compile(
    r"^UVM_(ERROR|FATAL)\s+\[([^\]]*)\]\s*(.*)$"
)  # as a history cell writes it
VERILATOR = re.compile(r"^(?:\[[0-9.]+\] )?%(Error(-\w+)?):\s*(.*)$")  # `[50] %Error:` at run time
COCOTB_ERROR = re.compile(
    r"^[ \t]*\d+(\.\d+)?[ \t]*(fs|ps|ns|us|ms|s|step)?[ \t]+(ERROR|CRITICAL)[ \t]+(\S+)[ \t]*(.*)$"
)
COCOTB_SUMMARY = re.compile(r"\*\* TESTS=\d+ PASS=\d+ FAIL=(\d+) SKIP=\d+")
PYTEST = re.compile(r"^=+ (.*\b(passed|failed|error|errors)\b.*) in [\d.]+s.*=+\s*$")
VERDICT = re.compile(r"\b(TEST|SIMULATION)\s+(PASSED|FAILED|PASS|FAIL)\b", re.IGNORECASE)
# The commercial simulators (tools/logs/simmessages.py's docstring), read with string tests where
# a prefix says it: VCS `Error-[ID] title` and `Error: "file", N: scope: at time T` ($error),
# Xcelium `tool: *E,CODE …` (E, SE, F fail), Questa `** Error…`/`** Fatal:`/`** Failure:`.
XCELIUM = re.compile(
    r"^[\w.]+: \*(E|SE|F|W|N),(\w+)\b:?\s*(\([^()]*\):?\s*)?(\(time [^)]*\)\.?\s*)?(.*?)\s*$"
)
QUESTA_FAILS = ("** Error:", "** Error (suppressible):", "** Fatal:", "** Failure:")
QUESTA_END = re.compile(r"^Errors: (\d+), Warnings: \d+")
EXIT = re.compile(r"\bExecution of \S+ exited with code (-?\d+)")
# A cocotb test's failure record (tools/logs/tracebacks.py's docstring) and its traceback.
COCOTB_RECORD = re.compile(
    r"^[ \t]*(\d+(\.\d+)?|-\.--)[ \t]*(fs|ps|ns|us|ms|s|step)?[ \t]+(INFO|WARNING|ERROR)[ \t]+"
    r"(cocotb(\.regression)?)[ \t]+(Test Failed: (\S+)(.*)|(\S+) failed\b(.*))$"
)


@dataclass
class Member:
    name: str
    test: str
    verdict: str = "none"  # pass, fail, none, unread
    error_line: int = 0
    signature: str = ""


@dataclass
class Expected:
    members: dict[str, Member] = field(default_factory=dict)
    buckets: dict[str, list[str]] = field(default_factory=dict)
    """Signature → failing member names."""


def test_of(name: str) -> str:
    stem = Path(name).name
    while True:
        for suffix in (".gz", ".log", ".txt", ".out"):
            if stem.endswith(suffix) and len(stem) > len(suffix):
                stem = stem[: -len(suffix)]
                break
        else:
            return stem


def mask(text: str, test: str) -> str:
    if test:
        text = re.sub(r"(?<!\w)(test_)?" + re.escape(test) + r"(_test)?(?!\w)", "<test>", text)
    text = re.sub(r"(?i)\bseed\b\s*[=:]?\s*-?\d+", "seed <seed>", text)
    words = []
    for word in re.split(r"(\s+)", text):  # a path: a token holding a slash or a backslash
        words.append(
            re.sub(r"[^\s()\[\]{}<>,;'\"`]*[/\\][^\s()\[\]{}<>,;'\"`]*", "<path>", word)
            if "/" in word or "\\" in word
            else word
        )
    text = "".join(words)
    text = re.sub(r"\b0[xX][0-9a-fA-F_]+\b", "<hex>", text)
    digits = {"b": "[01xXzZ?_]", "o": "[0-7xXzZ?_]", "d": "[0-9xXzZ?_]", "h": "[0-9a-fA-F_xXzZ?]"}
    for base, digit in digits.items():  # a based literal: only its base's digits
        text = re.sub(rf"(?<![\w'])\d*'[sS]?[{base}{base.upper()}]{digit}+\b", "<hex>", text)
    text = re.sub(
        r"\b[0-9a-fA-F]{6,}\b",
        lambda m: "<hex>" if re.search(r"\d", m[0]) and re.search(r"[a-fA-F]", m[0]) else m[0],
        text,
    )
    text = re.sub(r"(?<![\w.])\d+(\.\d+)?\s*(fs|ps|ns|us|ms|s)\b", "<time>", text)
    text = re.sub(r"(?<![\w.])[-+]?\d+(\.\d+)?(?!\w)", "<n>", text)
    return re.sub(r"\s+", " ", text).strip()[:300]


def drop_test(message: str, test: str) -> str:
    return (
        re.sub("^(test_)?" + re.escape(test) + r"(_test)?\s*:\s*", "", message) if test else message
    )


def simulator_line(line: str) -> tuple[bool, bool] | None:
    """(an error line, states fail) for a simulator's line, None for another line."""
    if line.startswith("Error-[") and "]" in line:
        return True, True
    if line.startswith(('Error: "', 'Fatal: "')):
        return True, True
    if (m := XCELIUM.match(line)) and m[1] in ("E", "SE", "F"):
        return True, True
    if line.startswith(QUESTA_FAILS):
        return True, True
    if m := QUESTA_END.match(line):
        return (False, True) if int(m[1]) else None
    if "An unexpected termination has occurred" in line or "(core dumped)" in line:
        return True, True
    if line.startswith("Fatal") and "Segmentation fault" in line:
        return True, True
    if m := EXIT.search(line):
        return (False, True) if int(m[1]) else None
    if line.startswith("Simulation terminated via $fatal"):
        return False, True
    return None


def simulator_shape(text: str) -> str:
    """A simulator's error line as its signature reads it (file, line and time out)."""
    if m := XCELIUM.match(text):
        return f"*{m[1]},{m[2]}" + (f": {m[5]}" if m[5] else "")
    if text.startswith(('Error: "', 'Fatal: "')):
        severity, rest = text.split(":", 1)
        scope = rest.split(", ", 1)[1].split(": ", 1)[1]  # after `"file", N: `
        return f"{severity}: {re.sub(r':? at time .*$', '', scope)}".strip()
    return text


def traceback_after(lines: list[str], index: int) -> tuple[int | None, int]:
    """The traceback after the cocotb record at `index`: the index of its exception line (the
    first line after `Traceback (most recent call last):` back at its indentation), or None; and
    the number of the last line it holds (the record's own when none follows)."""
    if index + 1 >= len(lines):
        return None, index + 1
    first = lines[index + 1].rstrip("\r")
    if not first.lstrip(" \t").startswith("Traceback (most recent call last):"):
        return None, index + 1
    base = len(first) - len(first.lstrip(" \t"))
    for later in range(index + 2, min(len(lines), index + 2001)):
        text = lines[later].rstrip("\r")
        indent = len(text) - len(text.lstrip(" \t"))
        if text.strip(" \t") and indent < base:
            return None, later
        if text.strip(" \t") and indent == base and not text.lstrip(" \t").startswith("Traceback"):
            return later, later + 1
    return None, min(len(lines), index + 2001)


def signature(line: str, test: str) -> str:
    text = PREFIX.sub("", line, count=1).strip()
    if m := UVM.match(text):
        return mask(f"UVM_{m[1]} {m[3]} {drop_test(m[4], test)}", test)
    if m := UVM_WRITTEN.match(text):
        return mask(f"UVM_{m[1]} {m[2]} {drop_test(m[3], test)}", test)
    if m := VERILATOR.match(text):
        return mask(f"%{m[1]}: {drop_test(m[3], test)}", test)
    if m := COCOTB_RECORD.match(text):
        if m[8] is not None:
            return mask(f"{m[4]} {m[5]} Test Failed: <test>{m[9]}", test)
        return mask(f"{m[4]} {m[5]} <test> failed{m[11]}", test)
    if m := COCOTB_ERROR.match(text):
        return mask(f"{m[3]} {m[4]} {drop_test(m[5], test)}", test)
    if simulator_line(text) is not None and simulator_line(text)[0]:
        return mask(simulator_shape(text), test)
    return mask(drop_test(text, test), test)


def read_member(path: Path, name: str) -> Member:
    member = Member(name, test_of(name))
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if b"\x00" in data[:8192]:
        member.verdict = "unread"
        return member
    said: set[str] = set()
    in_summary = False
    first_error = None
    lines = data.decode("utf-8", "replace").split("\n")
    skip_to = 0  # the lines of a cocotb record's traceback are not read as lines of their own
    for number, raw in enumerate(lines, 1):
        if number <= skip_to:
            continue
        raw = raw.rstrip("\r")
        line = PREFIX.sub("", raw, count=1)
        if SUMMARY.match(line):
            in_summary = True
            continue
        if m := COUNT.match(line):
            if in_summary and m[1] in ("ERROR", "FATAL"):
                said.add("fail" if int(m[2]) else "pass")
            continue
        if m := UVM.match(line):
            if m[1] in ("ERROR", "FATAL") and first_error is None:
                first_error = (number, raw)
            continue
        if VERILATOR.match(line):
            said.add("fail")
            if first_error is None:
                first_error = (number, raw)
            continue
        if (sim := simulator_line(line)) is not None:
            error, fails = sim
            if fails:
                said.add("fail")
            if error and first_error is None:
                first_error = (number, raw)
            continue
        if COCOTB_RECORD.match(line):
            said.add("fail")
            at, skip_to = traceback_after(lines, number - 1)
            if first_error is None:
                first_error = (number, raw) if at is None else (at + 1, lines[at].rstrip("\r"))
            continue
        if COCOTB_ERROR.match(line):
            if first_error is None:
                first_error = (number, raw)
            continue
        if m := COCOTB_SUMMARY.search(line):
            said.add("fail" if int(m[1]) else "pass")
        elif m := PYTEST.match(line):
            said.add("fail" if re.search(r"\b(failed|error|errors)\b", m[1]) else "pass")
        if m := VERDICT.search(line):
            said.add("fail" if m[2].upper().startswith("FAIL") else "pass")
    member.verdict = "fail" if "fail" in said else "pass" if said else "none"
    if first_error:
        member.error_line = first_error[0]
        member.signature = signature(first_error[1], member.test)
    elif member.verdict == "fail":
        member.signature = "(no error line)"
    return member


def expected(paths: dict[str, Path]) -> Expected:
    """Member name → file."""
    found = Expected()
    for name in sorted(paths):
        member = read_member(paths[name], name)
        found.members[name] = member
        if member.verdict == "fail":
            found.buckets.setdefault(member.signature, []).append(name)
    return found


def history_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return [
            {k.lower(): (v or "").strip() for k, v in row.items()} for row in csv.DictReader(handle)
        ]


def status_of(bucket: str, tests: set[str], rows: list[dict[str, str]]) -> tuple[str, str]:
    """`known` with the first run, or `new`."""
    for row in rows:
        cell = row.get("signature", "")
        if not cell:
            continue
        # a cell is signed as a log line is (one rule: `UVM_ERROR [ID] text` as UVM prints it)
        if (plain := signature(cell, "")) and plain in bucket:
            return "known", row["run"]
        failed = row["status"].upper() in ("FAIL", "FAILED", "ERROR")
        if row["test"] in tests and failed:
            own = signature(cell, row["test"])
            if own and own in bucket:
                return "known", row["run"]
    return "new", ""


def flaky(found: Expected, rows: list[dict[str, str]], window: int = 6) -> dict[str, str]:
    today: dict[str, str] = {}
    for member in found.members.values():
        if member.verdict in ("pass", "fail"):
            mark = "F" if member.verdict == "fail" else "P"
            today[member.test] = "F" if today.get(member.test) == "F" else mark
    result = {}
    for test, mark in today.items():
        past = []
        for row in rows:
            status = row["status"].upper()
            if row["test"] == test and status in ("PASS", "PASSED", "FAIL", "FAILED", "ERROR"):
                past.append("P" if status.startswith("PASS") else "F")
        statuses = "".join(past[-window:]) + mark
        if sum(1 for i in range(1, len(statuses)) if statuses[i] != statuses[i - 1]) >= 2:
            result[test] = statuses
    return result


def assert_scan_matches(got: Any, want: Expected) -> dict[str, str]:
    """`got`, a `scan_family` result, has the reference's verdicts, buckets and first examples (the
    first member's first error line): its statuses by member."""
    statuses = {member: status for member, _, status in got.outcomes}
    assert statuses == {name: member.verdict for name, member in want.members.items()}
    assert {bucket.signature: list(bucket.members) for bucket in got.buckets} == want.buckets
    for bucket in got.buckets:
        first = want.members[bucket.members[0]]
        assert bucket.example.member == first.name
        if first.error_line:
            assert bucket.example.number == first.error_line
    return statuses
