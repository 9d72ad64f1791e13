"""logsummary: the summaries a log prints of itself, with line numbers; every figure checked
against a count made apart in the test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import one_record
from tests.tools.logs import triage_reference as reference
from tools.catalog import tools_of
from tools.logs import logsummary
from tools.logs.logsummary import LogSummaryArgs

SEVERITIES = ("UVM_INFO", "UVM_WARNING", "UVM_ERROR", "UVM_FATAL")
TWO_RUNS = Path(__file__).resolve().parents[2] / "data" / "questa_two_runs.log"
"""Two runs appended to one Questa transcript, each closed by its report summary (tests/data/SOURCES.md)."""

QUESTA = """\
# Loading work.top
# UVM_INFO @ 0: reporter [RNTST] Running test fifo_test...
# UVM_INFO tb/env.sv(40) @ 0: uvm_test_top.env.agt[0].drv [DRV] started
# UVM_WARNING tb/sb.sv(77) @ 900: uvm_test_top.env.sb [SB_LATE] late compare
# UVM_ERROR tb/sb.sv(91) @ 1200: uvm_test_top.env.sb [SB_MISMATCH] exp 0x5 got 0x4
# UVM_ERROR tb/sb.sv(91) @ 1300: uvm_test_top.env.sb [SB_MISMATCH] exp 0x6 got 0x4
# UVM_FATAL tb/env.sv(120) @ 1400: uvm_test_top.env [TIMEOUT] watchdog expired
#
# --- UVM Report Summary ---
#
# ** Report counts by severity
# UVM_INFO :    2
# UVM_WARNING :    1
# UVM_ERROR :    2
# UVM_FATAL :    1
# ** Report counts by id
# [DRV]     1
# [RNTST]     1
# [SB_LATE]     1
# [SB_MISMATCH]     2
# [TIMEOUT]     1
#
# ** Note: $finish    : /tools/uvm/src/base/uvm_root.svh(135)
# TEST FAILED
"""


def summarize(tmp_path, content: str):
    record = one_record(tmp_path, "sim.log", "log", content)
    return logsummary.run(LogSummaryArgs(path="r"), {"path": record})


def test_a_questa_uvm_log_gives_its_summary_its_first_errors_and_its_verdict(tmp_path):
    excerpt = summarize(tmp_path, QUESTA)
    lines = QUESTA.splitlines()
    number = {text: index for index, text in enumerate(lines, 1)}  # line numbers computed apart
    counted = {
        severity: sum(line.startswith(f"# {severity} ") and "[" in line for line in lines)
        for severity in ("UVM_INFO", "UVM_WARNING", "UVM_ERROR", "UVM_FATAL")
    }
    assert counted == {"UVM_INFO": 2, "UVM_WARNING": 1, "UVM_ERROR": 2, "UVM_FATAL": 1}
    summary_at = number["# --- UVM Report Summary ---"]
    running = number["# UVM_INFO @ 0: reporter [RNTST] Running test fifo_test..."]
    assert excerpt.summary.startswith(
        f"UVM report summary at line {summary_at} (test fifo_test at line {running}): UVM_INFO 2, UVM_WARNING 1, UVM_ERROR 2, UVM_FATAL 1;"
    )
    counts = ", ".join(f"{name} {count}" for name, count in counted.items())
    assert f"message lines counted over the whole log: {counts}" in excerpt.summary
    first_mismatch = next(i for i, line in enumerate(lines, 1) if "[SB_MISMATCH]" in line)
    fatal = next(i for i, line in enumerate(lines, 1) if "UVM_FATAL tb" in line)
    assert (
        f"UVM_ERROR [SB_MISMATCH] line {first_mismatch}, UVM_FATAL [TIMEOUT] line {fatal}"
        in excerpt.summary
    )
    assert excerpt.summary.endswith(f"verdict line {number['# TEST FAILED']}: '# TEST FAILED'")
    shown = [line.number for line in excerpt.lines]
    assert first_mismatch in shown and first_mismatch + 1 not in shown  # the first of its id only
    assert running in shown
    assert list(range(summary_at, number["# [TIMEOUT]     1"] + 1)) == [
        n for n in shown if summary_at <= n < number["# TEST FAILED"]
    ]


def test_a_component_index_in_brackets_is_not_taken_for_the_report_id(tmp_path):
    excerpt = summarize(tmp_path, "UVM_ERROR a.sv(1) @ 5: top.env.agt[3].mon [MON] bad\n")
    assert "UVM_ERROR [MON] line 1" in excerpt.summary and "[3]" not in excerpt.summary


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            "%Warning-WIDTH: a.v:3: widths\n%Error: a.v:9: syntax error\n%Error: Exiting due to 1 error(s)\n",
            "Verilator: %Error 2, %Warning 1",
        ),
        (  # a run-time assertion, after its simulation time (Verilator's test_regress)
            "[50] %Error: t.v:24: Assertion failed in t: 'assert' failed.\n%Error: t/t.v:24: Verilog $stop\n",
            "Verilator: %Error 2",
        ),
        (
            "collected\n** TESTS=3 PASS=2 FAIL=1 SKIP=0   12.00  1.0  12.0 **\n",
            "line 2: ** TESTS=3 PASS=2 FAIL=1 SKIP=0",
        ),
        (
            "x\n===== 1 failed, 10 passed in 1.23s =====\n",
            "line 2: ===== 1 failed, 10 passed in 1.23s =====",
        ),
    ],
)
def test_verilator_cocotb_and_pytest_summaries_are_quoted(tmp_path, content, said):
    excerpt = summarize(tmp_path, content)
    assert said in excerpt.summary
    assert excerpt.summary.endswith("no verdict line found")


def test_a_log_without_any_summary_says_so(tmp_path):
    excerpt = summarize(tmp_path, "compiling\nrunning\ndone\n")
    assert excerpt.summary.startswith("no summary found") and not excerpt.lines


def test_it_is_a_triage_tool_for_logs():
    assert tools_of("triage")["logsummary"].record_kind == "log"


def reference_counts(lines: list[str]) -> dict[str, int]:
    """Message lines per severity, as `grep -c '^# UVM_ERROR .*@ [0-9]*: '` counts them."""
    return {
        severity: sum(re.match(rf"# {severity} .*@ \d+: ", line) is not None for line in lines)
        for severity in SEVERITIES
    }


def reference_summaries(lines: list[str]) -> list[tuple[int, str, int, dict[str, int]]]:
    """(line, test, `Running test` line, counts by severity) of each summary block, read apart."""
    found = []
    for at, line in enumerate(lines, 1):
        if line == "# --- UVM Report Summary ---":
            running = [
                (n, text) for n, text in enumerate(lines[:at], 1) if "[RNTST] Running test " in text
            ][-1]
            block = lines[at : at + 8]
            counts = {
                m[1]: int(m[2])
                for text in block
                if (m := re.fullmatch(r"# (UVM_\w+) :\s+(\d+)", text))
            }
            test = re.search(r"Running test (\w+)", running[1])[1]
            found.append((at, test, running[0], counts))
    return found


def listed(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {counts[name]}" for name in SEVERITIES)


def test_every_summary_of_a_transcript_with_two_runs_is_named_with_its_line_test_and_counts(
    tmp_path,
):
    text = TWO_RUNS.read_text()
    lines = text.splitlines()
    excerpt = summarize(tmp_path, text)
    (first, test1, running1, reported1), (second, test2, running2, reported2) = reference_summaries(
        lines
    )
    assert (reported1["UVM_ERROR"], reported2["UVM_ERROR"], reported2["UVM_FATAL"]) == (3, 2, 1)
    run1, run2 = reference_counts(lines[: first - 1]), reference_counts(lines[first : second - 1])
    assert (
        f"UVM report summary 1 of 2 at line {first} (test {test1} at line {running1}): {listed(reported1)} (counted in lines 1–{first - 1}: {listed(run1)});"
        in excerpt.summary
    )
    assert re.search(
        rf"UVM report summary 2 of 2 at line {second} \(test {test2} at line {running2}\): {listed(reported2)} \(counted in lines \d+–{second - 1}: {listed(run2)}\);",
        excerpt.summary,
    )
    whole = reference_counts(lines)
    assert whole["UVM_ERROR"] == reported1["UVM_ERROR"] + reported2["UVM_ERROR"]
    assert f"message lines counted over the whole log (2 runs): {listed(whole)};" in excerpt.summary
    shown = {line.number: line.text for line in excerpt.lines}
    assert {first, second, running1, running2} <= set(shown)
    assert shown[second + 5] == "# UVM_ERROR :    2" and not excerpt.truncated


def test_report_ids_with_spaces_or_none_are_counted(tmp_path):
    """`[Questa UVM]` and `[]` are report ids as the report server counts them."""
    text = TWO_RUNS.read_text()
    lines = text.splitlines()
    assert sum("[Questa UVM]" in line for line in lines) == 2 + 2 + 2  # messages, then each summary
    assert sum(" [] " in line for line in lines) == 5 + 2
    excerpt = summarize(tmp_path, text)
    assert (
        f"message lines counted over the whole log (2 runs): {listed(reference_counts(lines))};"
        in excerpt.summary
    )
    error = "# UVM_ERROR verilog_src/questa_uvm_pkg.sv(301) @ 0: reporter [Questa UVM] no +UVM_TESTNAME\n"
    assert (
        "first error per report id: UVM_ERROR [Questa UVM] line 2;"
        in summarize(tmp_path, "#\n" + error).summary
    )


_IDS = st.text(
    st.characters(blacklist_characters="]\n\r", blacklist_categories=("Cs",)), max_size=12
)
_NAMES = st.text(st.characters(blacklist_categories=("Cs", "Z", "Cc")), max_size=12)
_MESSAGES = st.tuples(
    st.sampled_from(SEVERITIES),
    st.sampled_from(["", "tb/a.sv(12) ", "/x y/b@c.sv(3) "]),
    st.sampled_from(["0", "1500", "10.5 ns"]),
    _NAMES,
    _IDS,
    st.sampled_from(["", "text", "a ] [b] @ 1: c [d]"]),
)


@given(st.lists(_MESSAGES, max_size=12), st.booleans())
def test_each_message_line_is_counted_once_whatever_its_file_reporter_or_id(
    tmp_path_factory, messages, questa
):
    prefix = "# " if questa else ""
    text = "".join(
        f"{prefix}{severity} {file}@ {time}: {reporter} [{report}] {message}\n"
        for severity, file, time, reporter, report, message in messages
    )
    made = {severity: sum(m[0] == severity for m in messages) for severity in SEVERITIES}
    excerpt = summarize(tmp_path_factory.mktemp("log"), text.encode("utf-8", "surrogateescape"))
    if messages:
        assert f"message lines counted over the whole log: {listed(made)}" in excerpt.summary


@pytest.mark.parametrize(
    "line",
    [
        "UVM_INFO " + "@" * 65000,
        "UVM_INFO " + "a @ b" * 13000,
        "UVM_INFO x @ 0: " + " " * 65000 + "[",
        "UVM_INFO x @ 0: r [" + "a" * 65000,
        "UVM_INFO " + "(@ :[ ]" * 9000,
    ],
    ids=["ats", "at-spaces", "spaces", "unclosed-id", "mixed"],
)
def test_a_long_line_that_only_looks_like_a_message_is_not_counted(tmp_path, line):
    """Every repeat of the message pattern stops at a byte it cannot take: a line is read in time
    linear in its length (a pattern that backtracked would take minutes on these)."""
    excerpt = summarize(tmp_path, line + "\nUVM_ERROR @ 5: reporter [X] real\n")
    assert "UVM_INFO 0, UVM_WARNING 0, UVM_ERROR 1, UVM_FATAL 0" in excerpt.summary


SIM_LOGS = Path(__file__).resolve().parents[2] / "data" / "sim_logs"
"""VCS, Xcelium and Questa logs and cocotb runs (tests/data/SOURCES.md)."""


def simulator_lines(text: str) -> list[tuple[int, bool, bool]]:
    """(line, an error, states fail) of each simulator line, read by the independent reference."""
    found = []
    for number, raw in enumerate(text.split("\n"), 1):
        said = reference.simulator_line(re.sub(r"^# ?", "", raw.rstrip("\r"), count=1))
        if said is not None:
            found.append((number, *said))
    return found


@pytest.mark.parametrize("name", sorted(path.name for path in SIM_LOGS.glob("*.log")))
def test_a_simulators_error_or_crash_is_named_with_its_line_as_the_runs_failure(tmp_path, name):
    """Issue 53, item 4: a VCS crash was summarised as `UVM_ERROR 0 … no verdict line found`."""
    text = (SIM_LOGS / name).read_text()
    excerpt = summarize(tmp_path, text)
    shown = {line.number for line in excerpt.lines}
    said = simulator_lines(text)
    errors = [number for number, error, _ in said if error]
    failing = [number for number, _, fails in said if fails]
    if errors:
        assert f"line {errors[0]}" in excerpt.summary and errors[0] in shown
    if failing and "verdict line" not in excerpt.summary:
        assert excerpt.summary.endswith(f"the simulator states a failure at line {failing[0]}")
    if not failing:
        assert "states a failure" not in excerpt.summary


def test_the_vcs_crash_of_issue_53_names_its_error_and_its_exit(tmp_path):
    text = (SIM_LOGS / "axi_burst.log").read_text()
    lines = text.split("\n")
    excerpt = summarize(tmp_path, text)
    noa = lines.index("Error-[NOA] Null object access") + 1
    exit_line = lines.index("Note: Execution of simv exited with code 1") + 1
    assert "simulator messages: VCS Error-[NOA] 1" in excerpt.summary
    assert f"Error-[NOA] line {noa}" in excerpt.summary
    assert f"line {exit_line}: Note: Execution of simv exited with code 1" in excerpt.summary
    assert "no verdict line found" not in excerpt.summary
    assert {noa, exit_line} <= {line.number for line in excerpt.lines}


def test_questas_closing_count_is_quoted_and_a_warning_is_not_a_failure(tmp_path):
    text = (SIM_LOGS / "keccak_round_mask.log").read_text()
    excerpt = summarize(tmp_path, text)
    closing = text.split("\n").index("# Errors: 0, Warnings: 55") + 1
    assert f"line {closing}: # Errors: 0, Warnings: 55" in excerpt.summary
    assert "Questa ** Warning 1" in excerpt.summary
    assert excerpt.summary.endswith("no verdict line found")


def test_a_cocotb_failure_is_named_with_its_assertion(tmp_path):
    text = (SIM_LOGS / "fifo_fill.log").read_text()
    lines = text.split("\n")
    excerpt = summarize(tmp_path, text)
    record = next(n for n, line in enumerate(lines, 1) if line.endswith("test_fill failed"))
    exception = next(n for n, line in enumerate(lines, 1) if "AssertionError: fifo" in line)
    assert (
        f"cocotb: test_fifo.test_fill failed at line {record}, its exception at line"
        f" {exception}: AssertionError: fifo not full after 16 writes" in excerpt.summary
    )
    assert {record, exception} <= {line.number for line in excerpt.lines}
