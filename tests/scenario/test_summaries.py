"""A regression's own summary is told from a log (`scenario/summaries.py`): no log or timing
report this repository holds, real or generated, reads as one; the shapes of a summary do."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from lab import LAB_DIR
from lab.nightly import write_family
from scenario.summaries import read_as_summary, summary_of

ROOT = Path(__file__).resolve().parents[3]
HELD = sorted(
    path
    for folder in (ROOT / "tests" / "data", LAB_DIR)
    for path in folder.rglob("*")
    if path.is_file() and path.name.removesuffix(".gz").endswith((".log", ".out", ".rpt"))
)


def text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", "replace")


@pytest.mark.parametrize("path", HELD, ids=[path.name for path in HELD])
def test_no_log_or_timing_report_held_here_reads_as_a_summary(path):
    assert read_as_summary(text(path)) is None


def test_no_generated_log_reads_as_a_summary(tmp_path):
    for path in write_family(tmp_path, 40, 2000, seed=3, gzip_every=4):
        assert read_as_summary(text(path)) is None, path.name


def test_a_status_list_and_a_table_read_as_summaries_and_a_log_named_txt_does_not(tmp_path):
    (tmp_path / "status.txt").write_text("PASS: a_1\nFAIL: b_2 - no log file\nPASS: c_3\n")
    (tmp_path / "table.rpt").write_text(
        "test   seed  status\n-----  ----  ------\nt_a    1     PASSED\nt_b    2     FAILED\n"
    )
    (tmp_path / "run.txt").write_text(
        "UVM_INFO @ 0: reporter [RNTST] Running test t...\nTEST PASSED\n"
    )
    (tmp_path / "status.log").write_text("PASS: a_1\nFAIL: b_2\n")  # a .log is a log
    found = {path.name: summary_of(path) for path in sorted(tmp_path.iterdir())}
    assert {name: str(summary) if summary else None for name, summary in found.items()} == {
        "run.txt": None,
        "status.log": None,
        "status.txt": "a test status on 3 of its 3 lines",
        "table.rpt": "a test status on 2 of its 3 lines",
    }
