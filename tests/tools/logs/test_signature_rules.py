"""A failure's signature: the masking rules, and one rule for a log's line and a history's cell,
the independent reference (`triage_reference.py`) agreeing."""

from __future__ import annotations

import pytest

from tests.tools.logs import triage_reference as reference
from tools.logs.familyscan import cell_signature, error_signature, mask, member_test


def test_the_masking_rules():
    line = b"# UVM_ERROR tb/sb.sv(91) @ 1200: uvm_test_top.env.sb [SB_MISMATCH] exp 0x5 got 0x4"
    assert error_signature(line) == "UVM_ERROR SB_MISMATCH exp <hex> got <hex>"
    assert error_signature(line[2:]) == error_signature(line)
    assert (
        mask(
            "reset_smoke_test seed=123 at /a/b.sv:12 took 40 ns beat 3 of agt[2] fifo0 8'hff",
            "reset_smoke",
        )
        == "<test> seed <seed> at <path> took <time> beat <n> of agt[<n>] fifo0 <hex>"
    )
    assert mask("got 5a5a00ff not deadbee") == "got <hex> not deadbee"
    assert (
        error_signature(b"%Error: tb/fifo_tb.sv:120: Assertion failed in TOP.fifo_tb.dut")
        == "%Error: <path> Assertion failed in TOP.fifo_tb.dut"
    )
    assert (
        error_signature(b"  120.00ns ERROR    cocotb.regression   uart_loop failed", "uart_loop")
        == "ERROR cocotb.regression <test> failed"
    )
    assert member_test("runs/R44/reset_smoke.log.gz") == "reset_smoke"


SAME_FAILURES = [
    # (a log's first error, the same failure as a history cell writes it)
    (
        "UVM_ERROR tb/axi_scb.sv(88) @ 1200ns: uvm_test_top.env.scb [AXI_SCB] Data mismatch",
        "UVM_ERROR [AXI_SCB] Data mismatch",
    ),
    (
        "UVM_ERROR tb/axi_scb.sv(88) @ 1200ns: uvm_test_top.env.scb [AXI_SCB] Data mismatch",
        "UVM_ERROR tb/axi_scb.sv(91) @ 3400ns: uvm_test_top.env.scb [AXI_SCB] Data mismatch",
    ),
    (
        "UVM_FATAL @ 0: reporter [NOCFG] no config for axi_vif",
        "UVM_FATAL [NOCFG] no config for axi_vif",
    ),
    (
        "%Error: tb/top.sv:120: Assertion failed in TOP.tb",
        "%Error: tb/top.sv:7: Assertion failed in TOP.tb",
    ),
]


@pytest.mark.parametrize(("line", "cell"), SAME_FAILURES)
def test_one_signature_rule_for_a_log_line_and_a_history_cell(line, cell):
    assert cell_signature(cell) == error_signature(line.encode())
    assert reference.signature(cell, "") == reference.signature(line, "")  # the reference agrees
