"""triage over the commercial simulators' logs and cocotb's current output (issue 53, items 4 and
7): VCS, Xcelium and Questa errors, crashes and exits, and cocotb's failure records with their
tracebacks (`tests/data/sim_logs/`, sources and licences in `tests/data/SOURCES.md`). Every verdict,
first error and bucket is checked against the independent reference (`triage_reference.py`), and
what each log says is read by hand beside it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools.logs import triage_reference as reference
from tools.logs import familyscan, memberfile
from tools.logs.familypool import scan_family
from tools.logs.familyscan import Member, scan_member
from tools.logs.runhistory import read_history
from tools.logs.signatures import cell_signature, error_signature, mask
from tools.logs.triage import report

DATA = Path(__file__).resolve().parents[2] / "data" / "sim_logs"
COPIED = {"morv_xrun.log": "5909ea3ae6f22178d0a294345a2fd6d849bb57fc"}
"""defvs/morv fa2b6732ce8c9cc71bb4a23b9310fc52e6a60a65, xrun.log (MIT): its git blob id."""


def paths() -> dict[str, Path]:
    return {path.name: path for path in sorted(DATA.glob("*.log"))}


def line(name: str, number: int) -> str:
    return (DATA / name).read_text().split("\n")[number - 1]


@pytest.fixture(scope="module")
def scanned() -> tuple[dict[str, familyscan.MemberScan], reference.Expected]:
    found = {name: scan_member(Member(name, str(path))) for name, path in paths().items()}
    return found, reference.expected(paths())


def test_the_copied_log_is_the_upstream_file():
    for name, blob in COPIED.items():
        data = (DATA / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob


def test_verdicts_first_errors_and_buckets_match_the_reference(scanned):
    got, want = scanned
    for name, scan in got.items():
        expected = want.members[name]
        assert (scan.verdict or "none") == expected.verdict, name
        assert (scan.first_error.number if scan.first_error else 0) == expected.error_line, name
        if scan.first_error:
            assert scan.signature == expected.signature, name
            assert scan.first_error.text == line(name, scan.first_error.number)
    family = scan_family([Member(name, str(path)) for name, path in paths().items()], workers=1)
    assert {bucket.signature: list(bucket.members) for bucket in family.buckets} == want.buckets


def test_what_the_simulators_say_read_by_hand(scanned):
    got, _ = scanned
    verdicts = {name: scan.verdict for name, scan in got.items()}
    first = {name: scan.first_error.number for name, scan in got.items() if scan.first_error}
    signatures = {name: scan.signature for name, scan in got.items()}
    # VCS: the crash of issue 53 item 4, no UVM summary; its block's first line is the failure.
    assert line("axi_burst.log", 8) == "Error-[NOA] Null object access"
    assert line("axi_burst.log", 24) == "Note: Execution of simv exited with code 1"
    assert (verdicts["axi_burst.log"], first["axi_burst.log"]) == ("fail", 8)
    assert signatures["axi_burst.log"] == signatures["axi_rlast.log"]
    assert signatures["axi_burst.log"] == "Error-[NOA] Null object access"
    assert (verdicts["riscv_arith.log"], first["riscv_arith.log"]) == ("fail", 6)
    assert signatures["riscv_arith.log"].startswith("An unexpected termination has occurred")
    assert (
        signatures["fifo_full.log"] == "Error: tb.dut.a_no_overflow"
    )  # `$error`, file and time out
    assert (verdicts["apb_regs.log"], got["apb_regs.log"].errors) == ("pass", 0)  # a Warning-[…]
    # Xcelium: an assertion's *E fails a run whose UVM summary counts no error.
    assert line("uart_error.log", 21) == "UVM_ERROR :    0"
    assert (verdicts["uart_error.log"], first["uart_error.log"]) == ("fail", 13)
    assert signatures["uart_error.log"] == (
        "*E,ASRTST: Assertion uart_tb_top.u_dut.u_assertions.AST_RX_DATA_STABLE has failed"
    )
    assert got["uart_error.log"].errors == 1  # the *W before it is not an error
    assert signatures["lite_fatal.log"] == "*F,FATSEV"
    assert signatures["morv_xrun.log"] == "*SE,FILEMIS: Cannot find the provided file <path>"
    # Questa: `** Fatal`/`** Error` fail; `Errors: 0` is the simulator's count, not a verdict.
    assert signatures["stepper_ctrl.log"] == (
        "** Fatal: (vsim-<n>) Value <n> is out of range <n> to <n>."
    )
    assert signatures["dma_check.log"] == "** Error: rd data mismatch: exp <hex> got <hex>"
    assert got["dma_check.log"].errors == 2
    assert line("keccak_round_mask.log", 15) == "# Errors: 0, Warnings: 55"
    assert (verdicts["keccak_round_mask.log"], got["keccak_round_mask.log"].errors) == (None, 0)
    # cocotb 2.0: each failure is its traceback's assertion, whatever the test: one signature.
    for name, number in (("fifo_fill.log", 11), ("fifo_drain.log", 11), ("fifo_wrap.log", 11)):
        assert line(name, number).strip() == "AssertionError: fifo not full after 16 writes"
        assert (verdicts[name], first[name]) == ("fail", number)
        assert signatures[name] == "AssertionError: fifo not full after <n> writes"
    assert verdicts["fifo_reset.log"] == "pass"


def test_the_history_knows_the_assertion_and_the_flaky_cocotb_test():
    family = [Member(name, str(path)) for name, path in paths().items()]
    with (DATA / "history.csv").open("rb") as stream:
        rows = read_history(stream)
    triaged = report(scan_family(family, workers=1), rows)
    want = reference.expected(paths())
    reference_rows = reference.history_rows(DATA / "history.csv")
    by_signature = {shown.bucket.signature: shown for shown in triaged.buckets}
    for shown in triaged.buckets:
        status, run = reference.status_of(
            shown.bucket.signature, set(shown.bucket.tests), reference_rows
        )
        assert (shown.status, shown.first_seen.run if shown.first_seen else "") == (status, run)
    fifo = by_signature["AssertionError: fifo not full after <n> writes"]
    assert fifo.bucket.tests == ("fifo_drain", "fifo_fill", "fifo_wrap")
    assert fifo.status == "known" and fifo.first_seen is not None and fifo.first_seen.run == "N1"
    assert by_signature["Error-[NOA] Null object access"].status == "known"
    assert {flaky.test: flaky.statuses for flaky in triaged.flaky} == reference.flaky(
        want, reference_rows
    )
    assert [flaky.test for flaky in triaged.flaky] == ["fifo_wrap"]


SAME_FAILURES = [
    # (a log's error line, the same failure as another log or a history cell writes it)
    ("Error-[NOA] Null object access", "Error-[NOA] Null object access"),
    (
        "xmsim: *E,ASRTST (../if/uart_assertions.sv,94): (time 14985 NS) Assertion"
        " uart_tb_top.u_dut.a_stable has failed",
        "ncsim: *E,ASRTST (./if/a.sv,12): (time 5 NS) Assertion uart_tb_top.u_dut.a_stable has failed",
    ),
    (
        "# ** Fatal: (vsim-3421) Value 11 is out of range 0 to 10.",
        "** Fatal: (vsim-3421) Value 12 is out of range 0 to 10.",
    ),
    (
        'Error: "tb/sva/fifo_props.sv", 57: tb.dut.a_no_overflow: at time 1000 ps',
        "Error: tb.dut.a_no_overflow",
    ),
    (
        "An unexpected termination has occurred in ./simv due to a signal: Segmentation fault",
        "An unexpected termination has occurred in ./vcs_simv due to a signal: Segmentation fault",
    ),
    (
        "                                                        AssertionError: fifo not full after 16 writes",
        "AssertionError: fifo not full after 16 writes",
    ),
    (  # a record with no traceback: the failing test's own name is out, whatever it is
        "   250.00ns WARNING  cocotb.regression                  test_fifo.test_fill failed:"
        " passed but we expected an error",
        "    10.00ns WARNING  cocotb.regression                  test_fifo.test_wrap failed:"
        " passed but we expected an error",
    ),
    (  # cocotb before 1.6
        "  1000.00ns ERROR    cocotb.regression                  Test Failed: test_fill (result"
        " was AssertionError)",
        "  2000.00ns ERROR    cocotb.regression                  Test Failed: test_drain (result"
        " was AssertionError)",
    ),
]


@pytest.mark.parametrize(("logged", "written"), SAME_FAILURES)
def test_one_signature_rule_on_both_sides(logged, written):
    assert error_signature(logged.encode()) == cell_signature(written)
    assert error_signature(logged.encode()) == reference.signature(logged, "")
    assert cell_signature(written) == reference.signature(written, "")


@pytest.mark.parametrize(
    ("test", "texts"),
    [
        (
            "fill",
            ("test_fill: fifo stuck", "fill: fifo stuck", "fill_test timed out", "test_fill x"),
        ),
        ("test_fill", ("test_fill: fifo stuck", "test_test_fill x", "test_fill_test timed out")),
    ],
)
def test_the_test_name_is_masked_whatever_its_prefix(test, texts):
    for text in texts:
        assert mask(text, test) == reference.mask(text, test)
        assert "fill" not in mask(text, test)
    assert mask("refill level 3", "fill") == "refill level <n>"  # never inside a word
    assert "reset" in mask("reset not released", "test_reset")  # the name is never cut


def cocotb_record(level: str, name: str, traceback: list[str], pad: int = 56) -> list[str]:
    head = f"{'250.00ns':>11} {level:<8} {'cocotb.regression':<34} {name} failed"
    return [head, *(" " * pad + text for text in traceback)]


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "tests/test_fifo.py", line 31, in test_fill',
    '    assert dut.full.value == 1, "fifo not full"',
    "AssertionError: fifo not full",
]


def test_cocotb_before_2_0_buckets_by_the_assertion_too(tmp_path):
    """cocotb 1.6–1.9 log a failed test at INFO (`test_x failed`), before 1.6 at ERROR
    (`Test Failed: test_x (result was …)`), each with its traceback after it."""
    logs = {
        "a.log": cocotb_record("INFO", "test_fill", TRACEBACK),
        "b.log": cocotb_record("INFO", "test_drain", TRACEBACK),
        "c.log": [
            f"{'9.00ns':>11} ERROR    {'cocotb.regression':<34} Test Failed: test_wrap (result"
            " was AssertionError)",
            *(" " * 56 + text for text in TRACEBACK),
        ],
    }
    for name, lines in logs.items():
        (tmp_path / name).write_text("\n".join([*lines, "** TESTS=1 PASS=0 FAIL=1 SKIP=0 **"]))
    members = [Member(name, str(tmp_path / name)) for name in logs]
    found = scan_family(members, workers=1)
    assert [(bucket.signature, bucket.count) for bucket in found.buckets] == [
        ("AssertionError: fifo not full", 3)
    ]
    assert all(bucket.example.number == 5 for bucket in found.buckets)
    want = reference.expected({name: tmp_path / name for name in logs})
    assert want.buckets == {"AssertionError: fifo not full": ["a.log", "b.log", "c.log"]}


@pytest.mark.parametrize("chunk", [7, 64, 200, 1 << 12])
def test_a_traceback_across_windows_is_read_as_a_whole(monkeypatch, chunk):
    """A record's traceback may straddle two reads: it is followed into the next window."""
    whole = {name: scan_member(Member(name, str(path))) for name, path in paths().items()}
    monkeypatch.setattr(memberfile, "_buffer", lambda: bytearray(chunk))
    for name, path in paths().items():
        cut = scan_member(Member(name, str(path)))
        assert (cut.verdict, cut.first_error, cut.signature, cut.errors) == (
            whole[name].verdict,
            whole[name].first_error,
            whole[name].signature,
            whole[name].errors,
        ), name


_LINES = st.sampled_from(
    [
        "UVM_INFO @ 0: reporter [RNTST] Running test t...",
        "UVM_ERROR a.sv(1) @ 5: top.env [SB] exp 1 got 2",
        "--- UVM Report Summary ---",
        "UVM_ERROR :    0",
        "Error-[NOA] Null object access",
        "Warning-[LINX_KRNL] Unsupported Linux kernel",
        'Error: "tb.sv", 26: tb.chk: at time 40 ns',
        "xmsim: *E,ASRTST (./a.sv,9): (time 5 NS) Assertion top.a has failed",
        "xmsim: *W,TRNEGDEL: negative delay encountered",
        "# ** Error: (vsim-3601) Iteration limit 5000 reached at time 300 ns.",
        "# ** Note: TEST PASSED",
        "# Errors: 0, Warnings: 1",
        "# Errors: 3, Warnings: 1",
        "Note: Execution of simv exited with code 0",
        "Note: Execution of simv exited with code 139",
        "./simv: line 3: 4242 Segmentation fault      (core dumped) ./simv",
        "$finish at simulation time                 2000",
        "Simulation terminated via $fatal(1) at time 120 US + 0",
        "   250.00ns WARNING  cocotb.regression                  test_fifo.test_fill failed",
        "   250.00ns INFO     cocotb.regression                  test_fill failed",
        "   250.00ns ERROR    cocotb.tb                          fifo stuck",
        " " * 56 + "Traceback (most recent call last):",
        " " * 56 + '  File "t.py", line 3, in test_fill',
        " " * 56 + "    assert x  # TEST FAILED",
        " " * 56 + "AssertionError: fifo not full",
        " " * 56 + "ValueError: bad value 3",
        " " * 56,
        "** TESTS=1 PASS=0 FAIL=1 SKIP=0 **",
        "TEST PASSED",
        "plain text",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, max_size=30), st.sampled_from([16, 64, 1 << 12]))
def test_any_mix_of_lines_reads_as_the_reference_reads_it(tmp_path_factory, lines, chunk):
    folder = tmp_path_factory.mktemp("mix")
    path = folder / "mix.log"
    path.write_text("\n".join(lines) + "\n")
    want = reference.read_member(path, "mix.log")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(memberfile, "_buffer", lambda: bytearray(chunk))
        got = scan_member(Member("mix.log", str(path)))
    assert (got.verdict or "none") == want.verdict
    assert (got.first_error.number if got.first_error else 0) == want.error_line
    if got.first_error:
        assert got.signature == want.signature
