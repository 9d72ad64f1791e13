"""`warrant scenario new` on a real nightly's folder (issue 53, items 8 and 9): a gzipped log
beside its family's logs is drafted, and triaged, as one of them; the regression's own summaries
(`.txt` status lists, an `.rpt` table) are left out, said, rather than drafted as a log family
that spends the evidence budget. Ground truth is the independent reference over the raw files."""

from __future__ import annotations

import gzip
import re
import tomllib
from pathlib import Path

import pytest

from lab.nightly import write_family
from scenario.draft import draft_manifest
from scenario.registry import load_scenario
from tests.cli_process import warrant
from tests.tools.logs import triage_reference as reference
from tools.logs.familypool import members_of, scan_family


def gzipped_nightly(folder: Path) -> dict[str, Path]:
    """30 logs under `runs/N7/`, every fourth gzipped; two of the gzipped ones fail."""
    return {
        f"runs/N7/{path.name}": path
        for path in write_family(folder / "runs" / "N7", 30, 3000, seed=10, gzip_every=4)
    }


def test_a_gzipped_log_is_a_member_of_its_family_and_its_failure_is_counted(tmp_path):
    folder = tmp_path / "nightly"
    paths = gzipped_nightly(folder)
    want = reference.expected(paths)
    packed_failures = [
        name
        for name, member in want.members.items()
        if name.endswith(".gz") and member.verdict == "fail"
    ]
    assert packed_failures  # the case: a gzipped member states a failure
    drafted = warrant("scenario", "new", str(folder), cwd=tmp_path)
    assert drafted.returncode == 0, drafted.stderr
    scenario = load_scenario(folder / "scenario.toml")
    assert list(scenario.families) == ["runs/N7/*.log*"]
    assert set(scenario.families["runs/N7/*.log*"]) == set(paths)
    family = scenario.family("runs/N7/*.log*", "log", "triage")
    got = scan_family(members_of(family.members), workers=1)
    assert {bucket.signature: list(bucket.members) for bucket in got.buckets} == want.buckets
    counted = {member for bucket in got.buckets for member in bucket.members}
    assert set(packed_failures) <= counted


def test_a_glob_that_would_reach_another_file_is_not_drafted(tmp_path):
    """`*.log*` would reach `keep.log.bak`: the plain and the gzipped logs are two families, and
    nothing the draft did not mean is admitted."""
    folder = tmp_path / "nightly"
    paths = gzipped_nightly(folder)
    (folder / "runs" / "N7" / "keep.log.bak").write_text("UVM_INFO old\n")
    text, _ = draft_manifest(folder, "nightly")
    (folder / "scenario.toml").write_text(text)
    scenario = load_scenario(folder / "scenario.toml")
    assert sorted(scenario.families) == ["runs/N7/*.log", "runs/N7/*.log.gz"]
    assert set(scenario.records) == set(paths)


SUMMARY_TXT = "".join(  # the lines a regression's status script collects, one per test
    f"{'FAIL' if index % 4 == 0 else 'PASS'}: dma_burst_{index:03d}_{7000 + index}"
    + (" - no PASS or FAIL\n" if index % 8 == 0 else "\n")
    for index in range(24)
)
SUMMARY_RPT = (
    "Regression N7 summary\n"
    "+------------------+-------+--------+\n"
    "| test             | seed  | status |\n"
    "+------------------+-------+--------+\n"
    + "".join(
        f"| irq_stress_{index:05d} | {100 + index:5d} | {'FAILED' if index % 3 else 'PASSED':6} |\n"
        for index in range(12)
    )
    + "+------------------+-------+--------+\n"
)


def status_lines(text: str) -> int:
    """Lines naming a test's status, counted apart (awk-like: a field equal to a status word)."""
    words = {"PASS", "PASSED", "FAIL", "FAILED"}
    return sum(1 for line in text.splitlines() if words & set(re.split(r"[\s|:]+", line)))


def test_the_regressions_own_summaries_are_left_out_and_said(tmp_path):
    folder = tmp_path / "nightly"
    paths = gzipped_nightly(folder)
    reports = folder / "reports"
    reports.mkdir()
    (reports / "status_a.txt").write_text(SUMMARY_TXT)
    (reports / "status_b.txt.gz").write_bytes(gzip.compress(SUMMARY_TXT.encode(), mtime=0))
    (reports / "summary.rpt").write_text(SUMMARY_RPT)
    drafted = warrant("scenario", "new", str(folder), cwd=tmp_path)
    assert drafted.returncode == 0, drafted.stderr
    manifest = (folder / "scenario.toml").read_text()
    scenario = load_scenario(folder / "scenario.toml")
    assert list(scenario.families) == ["runs/N7/*.log*"] and set(scenario.records) == set(paths)
    assert tomllib.loads(manifest)["budget"]["evidence"] == 6  # spent on logs only
    for name, text in [
        ("status_a.txt", SUMMARY_TXT),
        ("status_b.txt.gz", SUMMARY_TXT),
        ("summary.rpt", SUMMARY_RPT),
    ]:
        worded = sum(1 for line in text.splitlines() if re.search(r"\w", line))
        said = (
            f"left out: reports/{name}: the regression's own summary (a test status on"
            f" {status_lines(text)} of its {worded} lines), not a log"
        )
        assert said in drafted.stderr and f"# {said}" in manifest
    assert "an STA report" not in drafted.stderr  # what the table is not


@pytest.mark.parametrize("suffix", [".txt", ".rpt"])
def test_a_summary_a_glob_cannot_leave_out_stays_in_its_family_and_is_named(tmp_path, suffix):
    folder = tmp_path / "nightly"
    logs = folder / "logs"
    logs.mkdir(parents=True)
    for test in ("a", "b", "c"):
        (logs / f"{test}.txt").write_text(f"UVM_INFO run {test}\nTEST PASSED\n")
    (logs / f"status{suffix}").write_text(SUMMARY_TXT)
    text, left_out = draft_manifest(folder, "nightly")
    if suffix == ".txt":  # `logs/*.txt` reaches it: kept, and named beside the glob
        assert 'glob = "logs/*.txt"  # 4 files; logs/status.txt too: the regression' in text
        assert not left_out
    else:
        assert 'glob = "logs/*.txt"  # 3 files\n' in text
        assert [line.split(":")[0] for line in left_out] == ["logs/status.rpt"]
