"""JUnit XML as a nightly's member (`tools/logs/junit.py`): real files from
EnricoMi/publish-unit-test-result-action (Apache-2.0) and a cocotb `results.xml` generated in
cocotb's shapes (`tests/data/SOURCES.md`), every testcase checked against the independent reading
of `junit_reference.py`; a DTD (a billion laughs, an external entity) refused in one line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.tools.logs import junit_reference as reference
from tools.logs.familypool import scan_family
from tools.logs.familyscan import Member
from tools.logs.junit import NO_DTD, scan
from tools.logs.signatures import signature
from tools.logs.triage import report

JUNIT = Path(__file__).resolve().parents[2] / "data" / "real_logs" / "junit"
READABLE = ["pytest-junit.fail.xml", "with-xml-entities.xml", "cocotb-results.xml"]
STATUS = {"fail": "fail", "pass": "pass", "skipped": "none"}


@pytest.mark.parametrize("name", READABLE)
def test_each_testcase_is_a_test_with_its_verdict_and_failure_line(name: str) -> None:
    want = reference.cases(JUNIT / name)
    got = scan_family([Member(name, str(JUNIT / name))], workers=1)
    assert sorted((test, status) for _, test, status in got.outcomes) == sorted(
        (case.name, STATUS[case.status]) for case in want
    )
    failing = {case.name: case.line for case in want if case.status == "fail"}
    cited = {
        test: first.number
        for bucket in got.buckets
        for (_, test), first in zip(bucket.failures, bucket.firsts, strict=True)
    }
    assert cited == failing
    assert sum(bucket.count for bucket in got.buckets) == len(failing)


def test_a_skipped_testcase_is_said_skipped_not_a_pass() -> None:
    got = scan_family([Member("r.xml", str(JUNIT / "pytest-junit.fail.xml"))], workers=1)
    assert ("r.xml", "test_get_available_devices", "none") in got.outcomes
    assert any("test_get_available_devices: skipped (line 9" in note for _, note in got.notes)


def test_pytest_message_is_read_at_its_E_line_and_bucketed_by_the_signature_rule() -> None:
    got = scan(Member("r.xml", str(JUNIT / "pytest-junit.fail.xml")))
    (failed,) = [case for case in got.cases if case.verdict == "fail"]
    assert failed.first_error is not None
    assert failed.first_error.text == "AssertionError: 143 != 0"
    assert failed.signature == signature("AssertionError: 143 != 0", failed.test)


def test_cocotb_failures_with_one_message_shape_share_a_bucket() -> None:
    triaged = report(scan_family([Member("c.xml", str(JUNIT / "cocotb-results.xml"))]))
    sizes = {shown.bucket.signature: shown.bucket.tests for shown in triaged.buckets}
    assert sizes == {
        "AssertionError: fifo not empty after <n> reads": (
            "test_fifo_drain",
            "test_fifo_full_flag",
        ),
        "Test failed with RANDOM_SEED=<n>": ("test_fifo_fill",),
    }
    assert triaged.count("fail") == 3 and triaged.count("pass") == 1
    assert triaged.count("none") == 1


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<testsuite><testcase name="t"><failure message="&lol9;"/></testcase></testsuite>
"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="t"><failure message="&xxe;"/></testcase></testsuite>
"""


@pytest.mark.parametrize("body", [BILLION_LAUGHS, EXTERNAL], ids=["billion-laughs", "xxe"])
def test_a_dtd_is_refused_in_one_line_never_expanded(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "results.xml"
    path.write_bytes(body)
    got = scan(Member("results.xml", str(path)))
    assert got.unread == f"results.xml {NO_DTD}" and "\n" not in got.unread
    assert not got.cases


def test_a_real_external_entity_file_is_refused() -> None:
    got = scan(Member("n.xml", str(JUNIT / "NUnit-sec1752-file.xml")))
    assert got.unread == f"n.xml {NO_DTD}"


def test_an_undeclared_entity_or_broken_xml_is_one_unread_line(tmp_path: Path) -> None:
    path = tmp_path / "results.xml"
    path.write_bytes(b'<testsuite><testcase name="t"><failure message="&xxe;"/>')
    got = scan(Member("results.xml", str(path)))
    assert got.unread is not None and got.unread.startswith("results.xml is not well-formed XML")
    assert "\n" not in got.unread


def test_a_file_that_is_not_junit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "pom.xml"
    path.write_bytes(b"<project><modelVersion>4.0.0</modelVersion></project>")
    got = scan(Member("pom.xml", str(path)))
    assert got.unread == "pom.xml is not a JUnit report (its root is <project>): not read"


def test_a_gzipped_junit_file_is_read_as_the_plain_one(tmp_path: Path) -> None:
    path = tmp_path / "results.xml.gz"
    path.write_bytes(gzip.compress((JUNIT / "cocotb-results.xml").read_bytes()))
    plain = scan(Member("results.xml", str(JUNIT / "cocotb-results.xml")))
    packed = scan(Member("results.xml", str(path)))
    assert packed.cases == plain.cases


def test_testcases_sharing_a_name_are_told_apart_by_classname(tmp_path: Path) -> None:
    path = tmp_path / "results.xml"
    path.write_text(
        '<testsuite><testcase classname="a.TestX" name="test_one"/>\n'
        '<testcase classname="a.TestY" name="test_one"><error message="boom"/></testcase>\n'
        '<testcase classname="a.TestY" name="test_two"/></testsuite>\n'
    )
    got = scan_family([Member("results.xml", str(path))], workers=1)
    assert [(test, status) for _, test, status in got.outcomes] == [
        ("a.TestX.test_one", "pass"),
        ("a.TestY.test_one", "fail"),
        ("test_two", "pass"),
    ]


def test_a_test_with_a_log_and_a_testcase_is_one_test(tmp_path: Path) -> None:
    """Its log and its testcase agree (one row, one bucket entry), disagree (no verdict, said),
    or only one states a verdict (that one)."""
    night = tmp_path / "N7"
    night.mkdir()
    (night / "fill.log").write_text("UVM_ERROR tb.sv(9) @ 5: sb [SB] exp 1 got 2\nTEST FAILED\n")
    (night / "drain.log").write_text("TEST PASSED\n")
    (night / "reset.log").write_text("started\n")
    (night / "results.xml").write_text(
        '<testsuite>\n<testcase name="fill"><failure message="sb mismatch"/></testcase>\n'
        '<testcase name="drain"><failure message="late"/></testcase>\n'
        '<testcase name="reset"/>\n<testcase name="only_here"/>\n</testsuite>\n'
    )
    members = [Member(f"N7/{path.name}", str(path)) for path in sorted(night.iterdir())]
    triaged = report(scan_family(members, workers=1))
    assert triaged.result.outcomes == (
        ("N7/drain.log", "drain", "none"),
        ("N7/fill.log", "fill", "fail"),
        ("N7/results.xml", "only_here", "pass"),
        ("N7/results.xml", "reset", "pass"),
    )
    assert [(shown.bucket.failures, shown.bucket.signature) for shown in triaged.buckets] == [
        ((("N7/fill.log", "fill"),), "UVM_ERROR SB exp <n> got <n>")
    ]
    assert ("N7/drain.log", "its log says pass, N7/results.xml says fail: in conflict") in (
        triaged.result.notes
    )
