"""A nightly folder with a JUnit report (issue 54): `scenario new` and `warrant triage` draft the
report as a member of the nightly's logs, one family with the logs beside it, so that a test held
in both (its log and its testcase) is one test; a JUnit report beside other XML is a family of its
own name; an XML file that is no JUnit report is left alone. The ground truth is counted apart,
with `xml.etree` over the report and the logs' own verdict lines."""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli_process import warrant
from tools.logs import familypool

REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<!-- written by the regression's runner -->
<testsuites>
  <testsuite name="dma" tests="3">
    <testcase classname="dma" name="dma_burst"/>
    <testcase classname="dma" name="dma_drop"><failure message="DMA_DROP burst 12 dropped"/></testcase>
    <testcase classname="dma" name="dma_order"><failure message="DMA_DROP burst 40 dropped"/></testcase>
  </testsuite>
</testsuites>
"""
LOGS = {  # the tests' own logs beside the report: dma_burst's agrees, uart_loop has only a log
    "dma_burst.log": "UVM_INFO @ 0: reporter [RNTST] Running test dma_burst...\nTEST PASSED\n",
    "uart_loop.log": "UVM_INFO @ 0: reporter [RNTST] Running test uart_loop...\nTEST PASSED\n",
}


@pytest.fixture(autouse=True)
def _pools():
    yield
    familypool.shutdown_pools()


def truth(folder: Path) -> dict[str, str]:
    """Each test once, by name: a testcase's verdict (failure → fail), else its log's line."""
    found = {}
    for case in ET.parse(folder / "runs" / "results.xml").getroot().iter("testcase"):
        found[case.get("name", "")] = "fail" if case.find("failure") is not None else "pass"
    for name, text in LOGS.items():
        verdict = re.search(r"TEST (PASSED|FAILED)", text)
        found.setdefault(name.removesuffix(".log"), "pass" if verdict[1] == "PASSED" else "fail")
    return found


def nightly(folder: Path) -> Path:
    runs = folder / "runs"
    runs.mkdir(parents=True)
    (runs / "results.xml").write_text(REPORT)
    for name, text in LOGS.items():
        (runs / name).write_text(text)
    return folder


def test_a_junit_report_and_the_logs_beside_it_are_one_family_each_test_once(tmp_path):
    folder = nightly(tmp_path / "nightly")
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    records = tomllib.loads((folder / "scenario.toml").read_text())["record"]
    assert records == [{"glob": "runs/[!.]*", "kind": "log"}]
    (folder / "scenario.toml").unlink()
    done = warrant("triage", str(folder), "--json", "--db", "memory", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["triage"]
    want = truth(folder)
    assert {row["test"]: row["status"] for row in report["tests"]} == want
    assert report["summary"]["members"] == len(want) == 4
    failing = sorted(test for test, status in want.items() if status == "fail")
    (bucket,) = report["buckets"]  # both failures share the signature, numbers masked
    assert bucket["count"] == len(failing) and bucket["example"]["member"] == "runs/results.xml"


def test_a_junit_report_beside_other_xml_is_a_family_of_its_own_name(tmp_path):
    folder = tmp_path / "nightly"
    folder.mkdir()
    (folder / "results.xml").write_text(REPORT)
    (folder / "coverage.xml").write_text('<?xml version="1.0"?>\n<coverage line-rate="0.8"/>\n')
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    records = tomllib.loads((folder / "scenario.toml").read_text())["record"]
    assert records == [{"glob": "results.xml", "kind": "log"}]  # coverage.xml: no JUnit report
    (folder / "scenario.toml").unlink()
    done = warrant("triage", str(folder), "--json", "--db", "memory", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["triage"]
    cases = ET.parse(folder / "results.xml").getroot().iter("testcase")
    assert len(report["tests"]) == len(list(cases)) == 3
