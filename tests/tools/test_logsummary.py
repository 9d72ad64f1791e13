"""logsummary: the summaries a log prints of itself, with line numbers; every figure checked
against a count made apart in the test."""

from __future__ import annotations

import pytest

from tests.helpers import one_record
from tools import logsummary
from tools.catalog import tools_of
from tools.logsummary import LogSummaryArgs

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
    assert excerpt.summary.startswith(
        f"UVM report summary at line {summary_at}: UVM_INFO 2, UVM_WARNING 1, UVM_ERROR 2, UVM_FATAL 1;"
    )
    counts = ", ".join(f"{name} {count}" for name, count in counted.items())
    assert f"message lines counted in the log: {counts}" in excerpt.summary
    first_mismatch = next(i for i, line in enumerate(lines, 1) if "[SB_MISMATCH]" in line)
    fatal = next(i for i, line in enumerate(lines, 1) if "UVM_FATAL tb" in line)
    assert f"UVM_ERROR [SB_MISMATCH] line {first_mismatch}, UVM_FATAL [TIMEOUT] line {fatal}" in excerpt.summary  # fmt: skip
    assert excerpt.summary.endswith(f"verdict line {number['# TEST FAILED']}: '# TEST FAILED'")
    shown = [line.number for line in excerpt.lines]
    assert first_mismatch in shown and first_mismatch + 1 not in shown  # the first of its id only
    assert list(range(summary_at, number["# [TIMEOUT]     1"] + 1)) == [n for n in shown if summary_at <= n < number["# TEST FAILED"]]  # fmt: skip


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
