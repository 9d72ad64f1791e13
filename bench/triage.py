"""triage over a nightly-sized family against the shell pipeline, in the same run.

    .venv/bin/python bench/triage.py [--logs 1500 --mb 240] [--large] [--reps 3] [--dir DIR]

A family of generated logs (`write_family`: lab/loggen.py's UVM traffic, as plain UVM, as a Questa
transcript with `# `, and Verilator- and cocotb-shaped logs; about 12% failing under a handful of
signatures whose numbers vary, a few with no verdict) is written once into `--dir` (kept, and
reused when it is there), read once so that every timed run finds it in the page cache, then timed
in turns: Warrant's triage core (`tools.logs.triage.triage`, called directly: the first call
starts the process pool, later ones find it warm) and

    grep -H -E 'UVM_(ERROR|FATAL) |%Error|TEST (PASSED|FAILED)' *.log | awk … | sort | uniq -c

Warrant's triage is timed three ways: over plain members (`Member(id, path)`, no pin: read
unchecked), and over the family as a manifest admits it (`load_scenario` of a `glob`: each member
pinned, hashed once at admission and its digest remembered), read by the `triage` tool's body
(`run_family`: each record made a member as the pool takes it, then triaged and excerpted): with
the digests trusted (no member hashed again), and with them forgotten (every member hashed in its
worker as it is read).

Peak memory: `resource.getrusage` of this process and of its waited children (the pipeline's
largest process), and each pool worker's own peak (its VmHWM, read before the pool stops).
`--large`: 10,000 logs, about 2 GB.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lab.loggen import log_lines

T = TypeVar("T")

BASES = (
    "reset_smoke",
    "reset_warm",
    "dma_burst",
    "irq_stress",
    "axi_rlast",
    "fifo_full",
    "apb_regs",
    "uart_loop",
)
PIPELINE = (
    "grep -H -E 'UVM_(ERROR|FATAL) |%Error|TEST (PASSED|FAILED)' *.log"
    ' | awk \'{ sub(/^[^:]*:/, ""); gsub(/[0-9]+/, "N"); print }\' | sort | uniq -c'
)


# The family.


def _uvm_failure(rng: random.Random, test: str, base: str, time_ps: int) -> list[str]:
    """A failure whose signature depends on the test's base, its numbers on the member."""
    if base.startswith("reset"):
        return [
            f'"tb/sva/reset_props.sv", 57: top.dut.u_rst_ctrl.a_clk_en: started at'
            f" {time_ps - 40000}ps failed at {time_ps}ps",
            f"UVM_ERROR tb/checkers/reset_checker.sv(142) @ {time_ps}: uvm_test_top.env.rst_chk"
            f" [RST_CHK] {test}: clk_en not asserted within {rng.choice((4, 8))} cycles of"
            " synchronized reset release",
        ]
    if base == "dma_burst":
        return [
            f"UVM_ERROR tb/env/scoreboard.sv(214) @ {time_ps}: uvm_test_top.env.sb [SB_MISMATCH]"
            f" {test}: read 0x{rng.randrange(1 << 20):08x} expected 0x{rng.randrange(1 << 32):08x}"
            f" got 0x{rng.randrange(1 << 32):08x} (burst {rng.randrange(16)} of 16)"
        ]
    if base == "axi_rlast":
        return [
            f"UVM_FATAL tb/agents/axi_agt/monitor.sv(301) @ {time_ps}: uvm_test_top.env.axi_agt.mon"
            f" [AXI_PROTO] RLAST asserted before beat {rng.randrange(1, 8)} of 8"
        ]
    return [
        f"UVM_ERROR tb/agents/irq_agt/driver.sv(88) @ {time_ps}: uvm_test_top.env.irq_agt.drv"
        f" [IRQ_TIMEOUT] {test}: irq {rng.randrange(32)} not acknowledged within 2000 ns"
    ]


def _uvm(rng: random.Random, test: str, base: str, size: int, outcome: str) -> Iterator[str]:
    seed = rng.randrange(1 << 24)
    infos = 0
    failed_at = size // 2 if outcome == "fail" else -1
    written = 0
    for line in log_lines(f"{test}", seed, size):
        if line.startswith("--- UVM Report Summary"):
            break
        written += len(line) + 1
        infos += line.startswith("UVM_INFO")
        yield line
        if 0 <= failed_at <= written:
            time_ps = int(line.split("@ ")[1].split(":")[0]) if "@ " in line else 1000
            yield from _uvm_failure(rng, test, base, time_ps)
            failed_at = -1
    if outcome == "none":  # cut before its summary: the run died
        return
    errors = int(outcome == "fail" and base != "axi_rlast")
    fatals = int(outcome == "fail" and base == "axi_rlast")
    yield from [
        "--- UVM Report Summary ---",
        "",
        "** Report counts by severity",
        f"UVM_INFO : {infos:4d}",
        "UVM_WARNING :    0",
        f"UVM_ERROR : {errors:4d}",
        f"UVM_FATAL : {fatals:4d}",
        f"{'TEST FAILED' if outcome == 'fail' else 'TEST PASSED'}: {test}_test (seed {seed})",
    ]


def _verilator(rng: random.Random, test: str, size: int, outcome: str) -> Iterator[str]:
    written, cycle = 0, 0
    yield f"- V e r i l a t i o n   R e p o r t: Verilator 5.020 2024-01-01 rev v5.020 ({test})"
    while written < size:
        cycle += rng.randrange(1, 20)
        line = (
            f"[{cycle * 10}] top.dut.u_fifo: {rng.choice(('push', 'pop'))}"
            f" data=0x{rng.randrange(1 << 32):08x} level={rng.randrange(16)}"
        )
        written += len(line) + 1
        yield line
    if outcome == "fail":
        yield (
            f"%Error: tb/fifo_tb.sv:{rng.choice((120, 131))}: Assertion failed in"
            f" TOP.fifo_tb.dut: fifo overflow at level {rng.randrange(16, 32)}"
        )
        yield "%Error: tb/fifo_tb.sv:140: Verilog $stop"
        return
    yield "*-* All Finished *-*"
    if outcome == "pass":
        yield "TEST PASSED"


def _cocotb(rng: random.Random, test: str, size: int, outcome: str) -> Iterator[str]:
    written, now = 0, 0.0
    yield f"     0.00ns INFO     cocotb.gpi                         running {test}"
    while written < size:
        now += rng.randrange(1, 40) * 10
        line = (
            f"{now:10.2f}ns INFO     cocotb.uart_tb                     sent"
            f" 0x{rng.randrange(256):02x} baud={rng.choice((9600, 115200))}"
        )
        written += len(line) + 1
        yield line
    if outcome == "none":
        return
    if outcome == "fail":
        yield (
            f"{now:10.2f}ns ERROR    cocotb.regression                  {test} failed:"
            f" AssertionError: rx byte 0x{rng.randrange(256):02x} != tx byte"
            f" 0x{rng.randrange(256):02x} at {now:.2f}ns"
        )
    failed = int(outcome == "fail")
    yield f"** TESTS=1 PASS={1 - failed} FAIL={failed} SKIP=0 **"


def member_lines(index: int, size: int, seed: int = 7) -> tuple[str, Iterator[str]]:
    """The `index`-th member's test name and lines (deterministic in `index` and `seed`)."""
    rng = random.Random(f"family:{seed}:{index}")
    base = BASES[index % len(BASES)]
    test = f"{base}_{index:05d}"
    draw = rng.random()
    outcome = "fail" if draw < 0.12 else "none" if draw < 0.15 else "pass"
    kind = rng.choices(("uvm", "questa", "verilator", "cocotb"), (50, 20, 15, 15))[0]
    if kind == "verilator":
        return test, _verilator(rng, test, size, outcome)
    if kind == "cocotb":
        return test, _cocotb(rng, test, size, outcome)
    lines = _uvm(rng, test, base, size, outcome)
    if kind == "questa":
        return test, (f"# {line}" if line else "#" for line in lines)
    return test, lines


def write_family(
    folder: Path, count: int, member_bytes: int, *, seed: int = 7, gzip_every: int = 0
) -> list[Path]:
    """Write `count` logs of about `member_bytes` each into `folder` (every `gzip_every`-th one
    gzip-compressed, as `.log.gz`); their paths, sorted."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        test, lines = member_lines(index, member_bytes, seed)
        packed = gzip_every and index % gzip_every == gzip_every - 1
        path = folder / (f"{test}.log.gz" if packed else f"{test}.log")
        data = ("\n".join(lines) + "\n").encode()
        if packed:
            path.write_bytes(gzip.compress(data, mtime=0))
        else:
            path.write_bytes(data)
        paths.append(path)
    return sorted(paths)


# The bench.


def _family(folder: Path, count: int, total_mb: int) -> list[Path]:
    marker = folder / f".complete-{count}-{total_mb}"
    if marker.exists():
        return sorted(folder.glob("*.log"))
    started = time.perf_counter()
    paths = write_family(folder, count, (total_mb << 20) // count)
    marker.touch()
    print(f"generated {count} logs in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return paths


def _admitted(folder: Path, paths: list[Path]) -> list[Any]:
    """The family's records as a manifest of one `glob` admits them (`load_scenario`: each file
    hashed, and its digest remembered when the file had been quiet): a family just written is
    first left alone for `QUIET_NS`, as an admitted family would have been."""
    from tools.records.digests import QUIET_NS
    from tools.records.registry import load_scenario

    quiet = max(path.stat().st_ctime_ns for path in paths) + QUIET_NS - time.time_ns()
    if quiet > 0:
        time.sleep(quiet / 1e9 + 0.05)
    manifest = folder / "bench.toml"
    manifest.write_text(
        'id = "BENCH"\nprofile = "triage"\ngoal = "Triage the family."\n'
        '[[record]]\nglob = "*.log"\nkind = "log"\n'
    )
    return list(load_scenario(manifest).records.values())


def _timed(work: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    done = work()
    return time.perf_counter() - started, done


def _pipeline(folder: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        ["bash", "-c", PIPELINE], cwd=folder, capture_output=True, text=True, check=False
    )
    return time.perf_counter() - started, done.stdout


def _worker_peaks_kib() -> list[int]:
    """Each pool worker's peak resident memory (VmHWM), before the pool stops."""
    from tools.logs import triage

    peaks = []
    for executor in triage._POOLS.values():
        for process in list(getattr(executor, "_processes", {}).values()):
            try:
                status = Path(f"/proc/{process.pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]))
    return peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logs", type=int, default=1500)
    parser.add_argument("--mb", type=int, default=240)
    parser.add_argument("--large", action="store_true", help="10,000 logs, about 2 GB")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/warrant-triage-bench"))
    args = parser.parse_args()
    count, total = (10_000, 2048) if args.large else (args.logs, args.mb)
    folder = args.dir / f"{count}x{total}M"
    paths = _family(folder, count, total)
    size = sum(path.stat().st_size for path in paths)

    from tools.logs.familyscan import Member
    from tools.logs.triage import excerpt, run_family, triage
    from tools.records.digests import forget_all

    members = [Member(path.name, str(path)) for path in paths]
    records = _admitted(folder, paths)
    _pipeline(folder)  # into the page cache
    cold_s, cold = _timed(lambda: triage(members))
    ours, trusted, hashed, theirs = [], [], [], []
    for _ in range(args.reps):
        elapsed, result = _timed(lambda: triage(members))
        ours.append(elapsed)
        elapsed, pinned = _timed(lambda: run_family(records))
        trusted.append(elapsed)
        assert "not read:" not in pinned.summary, pinned.summary  # every member proven
        elapsed, output = _pipeline(folder)
        theirs.append(elapsed)
    forget_all()
    for _ in range(args.reps):
        elapsed, rehashed = _timed(lambda: run_family(records))
        hashed.append(elapsed)
    assert excerpt(result) == excerpt(cold) == pinned == rehashed
    warm, pipe = statistics.median(ours), statistics.median(theirs)
    warm_trusted, warm_hashed = statistics.median(trusted), statistics.median(hashed)
    workers = _worker_peaks_kib()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"## triage: {count} logs, {size / 2**20:.0f} MiB, {os.cpu_count()} cores\n")
    print("| what | seconds | × pipeline |")
    print("| --- | --- | --- |")
    print(
        f"| shell pipeline (grep -E … \\| awk \\| sort \\| uniq -c), median of {args.reps} | {pipe:.3f} | 1.00 |"
    )
    print(f"| triage, pool warm, median of {args.reps} | {warm:.3f} | {warm / pipe:.2f} |")
    print(
        f"| triage of the admitted records, digests trusted, median of {args.reps}"
        f" | {warm_trusted:.3f} | {warm_trusted / pipe:.2f} |"
    )
    print(
        f"| triage of the admitted records, every member hashed, median of {args.reps}"
        f" | {warm_hashed:.3f} | {warm_hashed / pipe:.2f} |"
    )
    print(f"| triage, first call (starts the pool) | {cold_s:.3f} | {cold_s / pipe:.2f} |")
    print()
    print(
        f"peak RSS: this process {own / 1024:.0f} MiB; largest waited child (the pipeline's)"
        f" {children / 1024:.0f} MiB; self + children {(own + children) / 1024:.0f} MiB;"
        f" pool workers {', '.join(f'{peak / 1024:.0f}' for peak in workers)} MiB each"
    )
    print(
        f"\nfamily: {result.count('pass')} pass, {result.count('fail')} fail,"
        f" {result.count('none')} no verdict; {len(result.result.buckets)} buckets;"
        f" the pipeline printed {len(output.splitlines())} distinct lines"
    )


if __name__ == "__main__":
    main()
