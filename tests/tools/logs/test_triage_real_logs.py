"""triage over a family of real logs copied from public repositories (`tests/data/real_logs/`,
sources and licences in `tests/data/SOURCES.md`): Verilator's expected outputs, UVM-SystemC's
golden logs of UVM-SystemC and UVM-SystemVerilog runs, and cocotb runs quoted in cocotb's
documentation. Every verdict and bucket is checked against the independent reference
(`triage_reference.py`), and a few facts read in the files by hand are asserted on their own."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from tests.tools.logs import triage_reference as reference
from tools.logs.familypool import scan_family
from tools.logs.familyscan import Member
from tools.logs.triage import MAX_BUCKETS, FamilyResult, excerpt, report

FAMILY = Path(__file__).resolve().parents[2] / "data" / "real_logs" / "family"

VERBATIM = {
    # verilator/verilator 459711ba718b1591d3591e15c12582d2a38304c3, test_regress/t/ (CC0-1.0)
    "t_assert_property_stop_bad.out": "e1ae0657866003943ca446bcc29fa6dd467ab8ef",
    "t_flag_decorations_bad.out": "f74a00347551e8bc5fd3538de4f53f5d58946f47",
    "t_lint_literal_bad.out": "f7b5bea34f33c64f8292443845f8dd9439dafe2d",
    "t_lint_mod_paren_bad.out": "9d042a8906cd9a29a5bb36160ac843bba85e9141",
    "t_lint_width_bad.out": "928095988f582ac217272cf3a042fe12cab6c219",
    "t_semaphore_fair.out": "ccb697bdfdb063726bbc9c5839aa072639999ed1",
    "t_stop_winos_bad.out": "8f72dc0d5dd6ebe2618dbb61245720700322d257",
    "t_uniqueif_fail1.out": "3726ece641fbda235805a263f32a7e99d74c9fb5",
    "t_uniqueif_fail2.out": "02f8bb1893b1d31f45a9a66b5f9bebb07bdf4dcf",
    "t_unopt_converge_run_bad.out": "7d2e6d461abba5f7e1b11cf3cffacdb697dc852a",
    # accellera-official/uvm-systemc d33d9a4728eb013e1a35e28bb9b71f9f00f62777 (Apache-2.0)
    "catcher_regnull_uvmsc.log": "4726784dfce5f26da9c50ce0a170283d0ee27941",
    "catcher_regnull_uvmsv.log": "c4253df5c47be16b4382719438ffa49a4f7c8cfc",
    "hello_world_uvmsc.log": "e6f33d84c05e10ea578362e0f314861ab59e9877",
    "hello_world_uvmsv.log": "568f622523eb23689ec0240559a7b6996256e86f",
    "packer_methods_uvmsc.log": "eac998170ceeebe81d82999039cddf93a96dce42",
    "phases_timeout_uvmsc.log": "9cf2f706e806a3923b5983e18c7641bfcac0ecbe",
    "phases_timeout_uvmsv.log": "5c69c2035a9cfd69ce84956386d2ab76bbf5552f",
    "regs_compare_mismatch_uvmsv.log": "a79535375ca06c56fc99fab8916db78082666972",
    "report_server_set_get_uvmsc.log": "247e6b0431f1641d06efd6d6c524c11e345d553b",
    "reporting_error_uvmsc.log": "d526ed7eb53d300895cd8a96607d3e98eb446575",
    "ubus_uvmsc.log.gz": "7c88a75042aa5a7f4f51777a2f59739e5936c679",  # gzipped here
}
"""Member → the git blob id of the upstream file it copies byte for byte (once gunzipped)."""
FROM_DOCS = {"analog_model.log", "first_steps_hello_world.log", "first_steps_self_checking.log"}
"""cocotb runs quoted in cocotb's documentation: the code block's lines, its indent removed."""


def paths() -> dict[str, Path]:
    return {path.name: path for path in sorted(FAMILY.iterdir())}


def text(name: str) -> str:
    raw = (FAMILY / name).read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()


def line(name: str, number: int) -> str:
    return text(name).split("\n")[number - 1]


@pytest.fixture(scope="module")
def scanned() -> tuple[FamilyResult, reference.Expected]:
    found = paths()
    got = scan_family([Member(name, str(path)) for name, path in found.items()], workers=1)
    return got, reference.expected(found)


def test_the_family_is_the_copies_recorded_in_sources():
    assert set(paths()) == set(VERBATIM) | FROM_DOCS
    for name, blob in VERBATIM.items():
        data = text(name).encode()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name
    assert all(path.stat().st_size < 200_000 for path in paths().values())


def test_verdicts_and_buckets_match_the_reference(scanned):
    got, want = scanned
    reference.assert_scan_matches(got, want)
    assert not got.unread
    assert sorted(report(got).named("none")) == sorted(
        name for name, member in want.members.items() if member.verdict == "none"
    )


def test_the_excerpt_cites_each_bucket_by_its_line_in_the_real_log(scanned):
    got, _ = scanned
    triaged = report(got)
    shown = excerpt(triaged)
    assert len(shown.lines) == len(triaged.buckets) == min(len(got.buckets), MAX_BUCKETS)
    for cited, bucket in zip(shown.lines, triaged.buckets, strict=True):
        example = bucket.bucket.example
        assert cited.number == example.number
        assert line(example.member, example.number) == example.text


def test_what_the_logs_say_read_by_hand(scanned):
    got, want = scanned
    statuses = {member: status for member, _, status in got.outcomes}
    assert sorted(statuses.values()).count("fail") == 17
    assert [name for name, status in statuses.items() if status == "pass"] == [
        "analog_model.log",
        "first_steps_hello_world.log",
        "hello_world_uvmsc.log",
        "hello_world_uvmsv.log",
        "ubus_uvmsc.log.gz",
    ]
    assert report(got).named("none") == ["packer_methods_uvmsc.log", "t_semaphore_fair.out"]
    buckets = {bucket.signature: bucket for bucket in got.buckets}
    first = {name: member.error_line for name, member in want.members.items()}

    # Verilator lint: 11 %Warning-WIDTH… (none an error) in 48 lines; it fails on its last line.
    assert line("t_lint_width_bad.out", 1).startswith("%Warning-WIDTHTRUNC: ")
    assert text("t_lint_width_bad.out").count("\n%Warning-WIDTH") == 10
    assert first["t_lint_width_bad.out"] == 49
    assert line("t_lint_width_bad.out", 49) == "%Error: Exiting due to"
    assert buckets["%Error: Exiting due to"].members == (
        "t_lint_literal_bad.out",
        "t_lint_width_bad.out",
    )
    # A syntax error on line 1, the test's file name masked.
    assert first["t_lint_mod_paren_bad.out"] == 1
    assert buckets[
        "%Error: <path><test>.v:<n>:<n>: syntax error, unexpected '(', expecting ';'"
    ].members == ("t_lint_mod_paren_bad.out",)
    # A runtime assertion prints `[50] %Error: …` after the simulation time: that assertion is
    # the first error (line 1), not the `$stop` that follows it.
    assert line("t_assert_property_stop_bad.out", 1).startswith("[50] %Error: ")
    assert first["t_assert_property_stop_bad.out"] == 1
    # Two `unique if` violations (lines 56 and 62 of t_uniqueif.v) are one kind of failure: one
    # bucket, each member's own assertion line its first error.
    assert line("t_uniqueif_fail1.out", 2).startswith("[10] %Error: t_uniqueif.v:56: ")
    assert line("t_uniqueif_fail2.out", 1).startswith("[10] %Error: t_uniqueif.v:62: ")
    unique_if = (
        "%Error: t_uniqueif.v:<n>: Assertion failed in top.t: 'unique if' statement violated"
    )
    assert buckets[unique_if].members == ("t_uniqueif_fail1.out", "t_uniqueif_fail2.out")
    assert (first["t_uniqueif_fail1.out"], first["t_uniqueif_fail2.out"]) == (2, 1)
    # A Windows path is a path too: this $stop is masked as a Linux one would be.
    assert not any("C:\\" in signature for signature in buckets)
    # A quoted option value is not a Verilog literal: 'BAD' stays as written.
    assert any("'BAD'" in signature for signature in buckets)
    assert first["t_unopt_converge_run_bad.out"] == 2
    assert any(signature.startswith("%Error-DIDNOTCONVERGE: <path> ") for signature in buckets)

    # UVM: the same time-out in UVM-SystemC (`@ 3320 us`) and in UVM-SV (`@ 3320`) is one bucket.
    timeout = buckets["UVM_FATAL TIMEOUT Time-out expired in main phase"]
    assert timeout.members == ("phases_timeout_uvmsc.log", "phases_timeout_uvmsv.log")
    assert (timeout.example.member, timeout.example.number) == ("phases_timeout_uvmsc.log", 3)
    assert first["phases_timeout_uvmsv.log"] == 24
    # `** UVM TEST PASSED **` (line 150) after an expected UVM_ERROR (line 146): the summary's
    # `UVM_ERROR :    1` still fails it; its hex values are masked.
    assert line("regs_compare_mismatch_uvmsv.log", 150) == "** UVM TEST PASSED **"
    assert first["regs_compare_mismatch_uvmsv.log"] == 146
    assert any("read from DUT (<hex>)" in signature for signature in buckets)
    # The only UVM_ERROR is printed by a custom server as `MY_SERVER: UVM_ERROR …`: not a
    # message line, so the run fails (its summary counts 1) with no error line.
    assert "MY_SERVER: UVM_ERROR" in line("report_server_set_get_uvmsc.log", 7)
    assert buckets["(no error line)"].members == ("report_server_set_get_uvmsc.log",)
    # UVM-SystemC says `nullptr` where UVM-SV says `Null`: two buckets.
    regnull = (
        "UVM_ERROR CBUNREG {} callback object cannot be registered with object (*) (uvm_object)"
    )
    assert buckets[regnull.format("nullptr")].members == ("catcher_regnull_uvmsc.log",)
    assert buckets[regnull.format("Null")].members == ("catcher_regnull_uvmsv.log",)
    # ubus (gzipped here) passes on its summary's zero counts: its `** UVM TEST PASSED **` is
    # inside a UVM_INFO message (line 1369), not a verdict.
    assert "[test_2m_4s] ** UVM TEST PASSED **" in line("ubus_uvmsc.log.gz", 1369)

    # cocotb 2.0: a failed test is a WARNING record (line 2) with its traceback after it; the
    # traceback's assertion (line 6) is the failure's line and signature, never the test's name
    # (issue 53, item 7). The analog model passes on `Test Passed: …` (line 21).
    assert line("first_steps_self_checking.log", 2).endswith("test_self_checking failed")
    assertion = buckets[
        "AssertionError: assert LogicArray('<n>', Range(<n>, 'downto', <n>)) == <n>"
    ].example
    assert (assertion.member, assertion.number) == ("first_steps_self_checking.log", 6)
    assert assertion.text.strip().startswith("AssertionError: assert LogicArray('00000000'")
    assert "** TESTS=1 PASS=0 FAIL=1 SKIP=0" in line("first_steps_self_checking.log", 14)
    assert "Test Passed: test_analog_model" in line("analog_model.log", 21)
