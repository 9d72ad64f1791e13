"""triage and searchfamily over record families: every figure checked against an independent
reference (`triage_reference.py`: plain `re` over each member's whole text) on generated families
that mix formats (UVM with and without Questa's `# `, Verilator, cocotb), gzipped members, a
binary member; and the shell pipeline's two mistakes kept as regression tests."""

from __future__ import annotations

import csv
import gzip
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lab.nightly import write_family
from tests.tools.logs import triage_reference as reference
from tools.logs import searchfamily, triage
from tools.logs.familypool import scan_family, shutdown_pools
from tools.logs.familyscan import (
    Member,
    read_chunks,
    scan_member,
)
from tools.logs.runhistory import read_history
from tools.logs.triage import excerpt, merge, report

ROOT = Path(__file__).resolve().parents[3]

PASSING_UVM = """\
UVM_INFO @ 0: reporter [RNTST] Running test fifo_basic_test...
UVM_INFO tb/env.sv(40) @ 0: uvm_test_top.env [ENV] started
--- UVM Report Summary ---
** Report counts by severity
UVM_INFO :    2
UVM_WARNING :    0
UVM_ERROR :    0
UVM_FATAL :    0
TEST PASSED: fifo_basic_test
"""


def failing_uvm(test: str, data: str, prefix: str = "") -> str:
    lines = [
        f"UVM_INFO @ 0: reporter [RNTST] Running test {test}_test...",
        f"UVM_ERROR tb/sb.sv(91) @ 1200: uvm_test_top.env.sb [SB_MISMATCH] {test}: exp 0x5 got {data}",
        "UVM_ERROR tb/sb.sv(91) @ 1300: uvm_test_top.env.sb [SB_MISMATCH] again",
        "--- UVM Report Summary ---",
        "** Report counts by severity",
        "UVM_ERROR :    2",
        "UVM_FATAL :    0",
        f"TEST FAILED: {test}_test",
    ]
    return "".join(f"{prefix}{line}\n" for line in lines)


def family(tmp_path: Path, count: int = 64, size: int = 3000) -> dict[str, Path]:
    """A generated family (every 5th member gzipped) plus hand-made members: a binary one, one
    whose only error is in a summary count, a pytest log, a Questa pair."""
    folder = tmp_path / "runs"
    paths = {path.name: path for path in write_family(folder, count, size, gzip_every=5)}
    extra = {
        "blob.log": b"\x7fELF\x00\x01\x02" + bytes(range(256)) * 8,
        "summary_only_0.log": (
            b"--- UVM Report Summary ---\nUVM_ERROR :    3\nUVM_FATAL :    0\nTEST FAILED\n"
        ),
        "pytest_run.log": b"collected 3 items\n==== 1 failed, 2 passed in 0.52s ====\n",
        "dma_q1.log": failing_uvm("dma_q1", "0x4", "# ").encode(),
        "dma_q2.log": failing_uvm("dma_q2", "0x7").encode(),
        "fifo_basic.log.gz": gzip.compress(PASSING_UVM.encode(), mtime=0),
    }
    for name, data in extra.items():
        (folder / name).write_bytes(data)
        paths[name] = folder / name
    return paths


def members(paths: dict[str, Path]) -> list[Member]:
    return [Member(name, str(path)) for name, path in paths.items()]


def write_history(path: Path, found: reference.Expected) -> Path:
    """Six earlier runs of every failing test (and some passing ones): alternating statuses for
    every third test, and, for a few, the signature of today's bucket as an earlier row said it."""
    rng = random.Random(11)
    rows = [["run", "date", "test", "status", "seed", "signature"]]
    tests = sorted({member.test for member in found.members.values()})
    for run in range(1, 7):
        for index, test in enumerate(tests):
            status = ("FAIL" if run % 2 else "PASS") if index % 3 == 0 else "PASS"
            cell = ""
            if status == "FAIL" and test.startswith("irq_stress"):
                cell = f"IRQ_TIMEOUT irq {rng.randrange(32)} not acknowledged"
            elif status == "FAIL" and test.startswith("axi_rlast"):
                cell = f"AXI_PROTO RLAST asserted before beat {rng.randrange(1, 8)}"
            elif status == "FAIL" and test.startswith("reset_warm"):
                cell = f"{test}: clk_en not asserted within 8 cycles"
            rows.append(
                [f"N{run}", f"2026-11-{run:02d}", test, status, str(rng.randrange(1 << 20)), cell]
            )
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def test_verdicts_buckets_and_no_verdicts_match_the_reference(tmp_path):
    paths = family(tmp_path)
    want = reference.expected(paths)
    got = scan_family(members(paths), workers=1)
    statuses = reference.assert_scan_matches(got, want)
    triaged = report(got)
    assert triaged.named("none") == sorted(
        name for name, member in want.members.items() if member.verdict == "none"
    )
    assert triaged.named("none") and any(name.endswith(".gz") for name in statuses)
    assert {"fail", "pass", "none", "unread"} <= set(statuses.values())


def test_new_known_and_flaky_match_the_reference(tmp_path):
    paths = family(tmp_path)
    want = reference.expected(paths)
    history = write_history(tmp_path / "history.csv", want)
    with history.open("rb") as stream:
        rows = read_history(stream)
    triaged = report(scan_family(members(paths), workers=1), rows)
    reference_rows = reference.history_rows(history)
    assert len(triaged.buckets) == min(len(want.buckets), triage.MAX_BUCKETS)
    statuses = set()
    for shown in triaged.buckets:
        status, run = reference.status_of(
            shown.bucket.signature, set(shown.bucket.tests), reference_rows
        )
        statuses.add(status)
        assert shown.status == status, shown.bucket.signature
        assert (shown.first_seen.run if shown.first_seen else "") == run
    assert statuses == {"new", "known"}
    assert {flaky.test: flaky.statuses for flaky in triaged.flaky} == reference.flaky(
        want, reference_rows
    )
    assert triaged.flaky


def test_the_excerpt_cites_each_bucket_by_member_and_line_and_says_what_it_left_out(tmp_path):
    paths = family(tmp_path)
    triaged = report(scan_family(members(paths), workers=1))
    shown = excerpt(triaged)
    assert len(shown.lines) == len(triaged.buckets) <= triage.MAX_BUCKETS
    for line, bucket in zip(shown.lines, triaged.buckets, strict=True):
        example = bucket.bucket.example
        assert line.number == example.number
        assert line.text.startswith(f"{bucket.label} {example.member}:{example.number}: ")
        raw = paths[example.member].read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        assert raw.decode().split("\n")[example.number - 1] == example.text
    assert "no verdict:" in shown.summary and "not read: blob.log is binary" in shown.summary
    assert any("blob.log" in unknown for unknown in triaged.unknowns)


def test_only_the_largest_buckets_are_shown_and_the_rest_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(triage, "MAX_BUCKETS", 2)
    paths = family(tmp_path)
    triaged = report(scan_family(members(paths), workers=1))
    counts = sorted((bucket.count for bucket in triaged.result.buckets), reverse=True)
    assert [shown.bucket.count for shown in triaged.buckets] == counts[:2]
    assert triaged.more_buckets == len(counts) - 2 and triaged.more_failures == sum(counts[2:])
    shown = excerpt(triaged)
    assert shown.truncated and f"{triaged.more_buckets} more" in shown.summary
    assert any("smaller bucket(s) not shown" in unknown for unknown in triaged.unknowns)


def test_a_summary_count_line_is_not_the_first_error(tmp_path):
    """The pipeline's first mistake: `grep 'UVM_(ERROR|FATAL) '` takes `UVM_ERROR :    3`, a
    count in the report summary, for an error message."""
    log = tmp_path / "summary_only.log"
    log.write_text("--- UVM Report Summary ---\nUVM_ERROR :    3\nUVM_FATAL :    0\nTEST FAILED\n")
    scan = scan_member(Member("summary_only.log", str(log)))
    assert scan.verdict == "fail" and scan.first_error is None and scan.errors == 0
    assert scan.stated is not None and scan.stated.number == 4  # the last line stating the failure
    passing = tmp_path / "fifo_basic.log"
    passing.write_text(PASSING_UVM)
    scan = scan_member(Member("fifo_basic.log", str(passing)))
    assert (scan.verdict, scan.first_error, scan.errors) == ("pass", None, 0)
    failing = tmp_path / "dma.log"
    failing.write_text(failing_uvm("dma", "0x4"))
    scan = scan_member(Member("dma.log", str(failing)))
    assert scan.first_error is not None and scan.first_error.number == 2 and scan.errors == 2


def test_questas_prefix_does_not_split_a_signature(tmp_path):
    """The pipeline's second mistake: `# UVM_ERROR …` and `UVM_ERROR …` are two lines to
    `sort | uniq -c`; read through, they are one signature."""
    (tmp_path / "dma_q1.log").write_text(failing_uvm("dma_q1", "0x4", "# "))
    (tmp_path / "dma_q2.log").write_text(failing_uvm("dma_q2", "0x00000007"))
    found = scan_family(
        [Member(name, str(tmp_path / name)) for name in ("dma_q1.log", "dma_q2.log")], workers=1
    )
    assert [(bucket.signature, bucket.count) for bucket in found.buckets] == [
        ("UVM_ERROR SB_MISMATCH exp <hex> got <hex>", 2)
    ]


def test_a_binary_member_is_its_own_unknown_and_the_family_goes_on(tmp_path):
    (tmp_path / "a.log").write_bytes(b"\x00\x01binary")
    (tmp_path / "b.log").write_text(PASSING_UVM)
    found = scan_family(
        [Member(name, str(tmp_path / name)) for name in ("b.log", "a.log")], workers=1
    )
    assert found.outcomes == (("a.log", "a", "unread"), ("b.log", "b", "pass"))
    assert found.unread[0][0] == "a.log" and "binary" in found.unread[0][1]


def test_a_gzipped_member_reads_as_its_plain_text(tmp_path):
    text = failing_uvm("dma", "0x4", "# ")
    (tmp_path / "dma.log").write_text(text)
    (tmp_path / "dma.log.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    (tmp_path / "cut.log.gz").write_bytes(gzip.compress(text.encode(), mtime=0)[:-12])
    plain = scan_member(Member("dma.log", str(tmp_path / "dma.log")))
    packed = scan_member(Member("dma.log", str(tmp_path / "dma.log.gz")))
    assert packed == plain
    cut = scan_member(Member("cut.log", str(tmp_path / "cut.log.gz")))
    assert any("gzip stream" in note for note in cut.notes)


def test_a_member_growing_while_read_is_read_to_its_size_at_open(tmp_path):
    log = tmp_path / "live.log"
    log.write_text(PASSING_UVM)
    size = log.stat().st_size
    seen = []

    def visit(buffer: bytearray, count: int, last: bool) -> None:
        seen.append(bytes(buffer[:count]))
        with log.open("a") as more:
            more.write("UVM_ERROR tb/x.sv(1) @ 9: top [LATE] written after open\n")

    total, notes = read_chunks(Member("live.log", str(log)), visit)
    assert total == size and b"".join(seen) == PASSING_UVM.encode()
    assert notes and f"read up to {size} bytes" in notes[0]


def test_shards_merge_into_exactly_the_whole_family(tmp_path):
    paths = family(tmp_path, count=40)
    everyone = members(paths)
    whole = scan_family(everyone, workers=1)
    rng = random.Random(3)
    for _ in range(4):
        shuffled = everyone[:]
        rng.shuffle(shuffled)
        cuts = sorted(rng.sample(range(1, len(shuffled)), 3))
        shards = [
            scan_family(shuffled[a:b], workers=1)
            for a, b in zip([0, *cuts], [*cuts, len(shuffled)], strict=True)
        ]
        rng.shuffle(shards)
        assert merge(shards) == whole
        assert merge([merge(shards[:2]), merge(shards[2:])]) == whole
    assert merge([whole, whole]).outcomes == whole.outcomes
    assert merge([whole, whole]).buckets == whole.buckets


def test_the_pool_gives_what_one_process_gives(tmp_path):
    paths = family(tmp_path, count=48)
    try:
        assert scan_family(members(paths), workers=2) == scan_family(members(paths), workers=1)
        found = searchfamily.search_family(members(paths), "UVM_ERROR", limit=5, workers=2)
        assert found == searchfamily.search_family(members(paths), "UVM_ERROR", limit=5, workers=1)
    finally:
        shutdown_pools()


def test_the_lab_nightly_family_against_its_history():
    lab = Path(__file__).resolve().parents[3] / "lab"
    nightly = [
        Member(f"runs/R44/{path.name}", str(path))
        for path in sorted((lab / "runs/R44").glob("*.log"))
    ]
    with (lab / "history/nightly.csv").open("rb") as stream:
        rows = read_history(stream)
    triaged = report(scan_family(nightly, workers=1), rows, run="R44")
    by_test = {shown.bucket.tests: shown for shown in triaged.buckets}
    assert by_test[("reset_smoke", "reset_warm")].bucket.count == 2  # one signature, two tests
    irq = by_test[("irq_stress",)]
    assert irq.status == "known" and irq.first_seen is not None
    assert (irq.first_seen.run, irq.first_seen.date) == ("R43", "2026-11-29")
    assert by_test[("dma_burst",)].status == "new"
    assert triaged.flaky == ()  # one earlier run each: nothing alternates


@pytest.mark.parametrize("regex", [False, True])
def test_searchfamily_counts_every_member_to_its_end(tmp_path, regex):
    paths = family(tmp_path, count=30)
    query = "UVM_(ERROR|FATAL) " if regex else "UVM_ERROR"
    found = searchfamily.search_family(members(paths), query, regex=regex, limit=7, workers=1)
    want: dict[str, list[int]] = {}
    for name, path in sorted(paths.items()):
        data = path.read_bytes()
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        if b"\x00" in data[:8192]:
            continue
        lines = data.decode().split("\n")
        hits = [
            number
            for number, line in enumerate(lines, 1)
            if (reference.re.search(query, line) if regex else query in line)
        ]
        if hits:
            want[name] = hits
    assert dict(found.counts) == {name: len(hits) for name, hits in want.items()}
    first = sorted((name, number) for name, hits in want.items() for number in hits)[:7]
    assert [(hit.member, hit.number) for hit in found.hits] == first
    shown = searchfamily.excerpt(found, query, regex)
    assert shown.truncated and "counted and not shown" in shown.summary
    assert shown.lines[0].text.startswith(f"{first[0][0]}:{first[0][1]}: ")
    assert "not read: blob.log is binary" in shown.summary
    halves = [
        searchfamily.search_family(members(paths)[::2], query, regex=regex, limit=7, workers=1),
        searchfamily.search_family(members(paths)[1::2], query, regex=regex, limit=7, workers=1),
    ]
    assert searchfamily.merge(halves) == found


@pytest.mark.parametrize("how", ["from stdin", "a script without a main guard"])
def test_the_pool_runs_whatever_the_callers_main_module(tmp_path, how):
    """Workers start without the caller's main module: one read from stdin cannot be imported,
    and a script without `if __name__ == "__main__"` would run again in every worker."""
    paths = family(tmp_path, count=40, size=2000)
    want = reference.expected(paths)
    program = textwrap.dedent(f"""\
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(ROOT)!r})
        from tools.logs.familyscan import Member
        from tools.logs.familypool import scan_family, shutdown_pools
        with open({str(tmp_path / "ran")!r}, "a") as ran:
            ran.write("once\\n")
        paths = json.loads({json.dumps({k: str(v) for k, v in paths.items()})!r})
        got = scan_family([Member(k, v) for k, v in paths.items()], workers=2)
        print(json.dumps({{member: status for member, _, status in got.outcomes}}))
        shutdown_pools()
        """)
    if how == "from stdin":
        command = [sys.executable, "-"]
        done = subprocess.run(command, input=program, capture_output=True, text=True, timeout=120)
    else:
        (tmp_path / "unguarded.py").write_text(program)
        command = [sys.executable, str(tmp_path / "unguarded.py")]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    statuses = json.loads(done.stdout)
    assert statuses == {name: member.verdict for name, member in want.members.items()}
    assert (tmp_path / "ran").read_text() == "once\n"  # the program ran once, not in each worker


def test_a_failure_the_history_writes_as_uvm_prints_it_is_known(tmp_path):
    log = tmp_path / "axi_burst.log"
    log.write_text(
        "UVM_INFO @ 0: reporter [RNTST] Running test axi_burst...\n"
        "UVM_ERROR tb/axi_scb.sv(88) @ 1200ns: uvm_test_top.env.scb [AXI_SCB] Data mismatch\n"
        "--- UVM Report Summary ---\nUVM_ERROR :    1\nTEST FAILED\n"
    )
    history = tmp_path / "history.csv"
    history.write_text(
        "run,date,test,status,signature\n"
        "N1,2026-11-01,axi_burst,FAIL,UVM_ERROR [AXI_SCB] Data mismatch\n"
    )
    with history.open("rb") as stream:
        rows = read_history(stream)
    triaged = report(scan_family(members({"axi_burst.log": log}), workers=1), rows)
    [shown] = triaged.buckets
    assert shown.status == "known" and shown.first_seen is not None
    assert shown.first_seen.run == "N1"
