"""triage over a nightly-sized family against the shell pipeline, in the same run.

    .venv/bin/python bench/triage.py [--logs 1500 --mb 240] [--large] [--reps 3] [--cli-reps 3]
                                     [--dir DIR]

A family of generated logs (`lab.nightly.write_family`: lab/loggen.py's UVM traffic, as plain UVM, as a Questa
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

Then through the CLI, in turns (`--cli-reps`, after one warm-up of (2) and of (3), excluded from the
medians and shown apart): (1) the pipeline, (2) `warrant run` of a manifest approving the family
(`glob = "*.log"`, `deadline_s` and `call_s` of an hour) with a `file:` chooser calling `triage`
then stopping, (3) the same with only the stop: the same admission (every member hashed), so
triage through the CLI is (2) − (3), pool start included. Each run has a fresh SQLite database,
and is timed from its spawn to its exit. Its memory: `warrant run`'s own peak from GNU time's
`%M` (it runs under `/usr/bin/time`, a child of a small process: a child of this one would start
with this process's peak as its own), and every other process of its tree (the forkserver, the
resource tracker, the pool's workers; found by parent id in /proc) by its VmHWM, sampled every
50 ms until it exits; "largest process" is the largest of these, "tree sum" the largest sum of
the tree's VmRSS at one sample (shared pages counted in each process).
`--large`: 10,000 logs, about 2 GB.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from bench.triage_cli import compare_cli
from lab.nightly import write_family

T = TypeVar("T")

PIPELINE = (
    "grep -H -E 'UVM_(ERROR|FATAL) |%Error|TEST (PASSED|FAILED)' *.log"
    ' | awk \'{ sub(/^[^:]*:/, ""); gsub(/[0-9]+/, "N"); print }\' | sort | uniq -c'
)


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
    from scenario.digests import QUIET_NS
    from scenario.registry import load_scenario

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
    from tools.logs import familypool

    peaks = []
    for executor in familypool._POOLS.values():
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
    parser.add_argument(
        "--cli-reps", type=int, default=3, help="turns of the `warrant run` comparison (0: none)"
    )
    parser.add_argument("--dir", type=Path, default=Path("/tmp/warrant-triage-bench"))
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    count, total = (10_000, 2048) if args.large else (args.logs, args.mb)
    folder = args.dir / f"{count}x{total}M"
    paths = _family(folder, count, total)
    size = sum(path.stat().st_size for path in paths)

    from scenario.digests import forget_all
    from tools.logs.familypool import shutdown_pools
    from tools.logs.familyscan import Member
    from tools.logs.triage import excerpt, run_family, triage

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
    write_ratios(
        args.json,
        {
            f"triage, {count} logs: warm / shell pipeline": warm / pipe,
            f"triage, {count} logs: admitted, every member hashed / shell pipeline": warm_hashed
            / pipe,
        },
    )
    shutdown_pools()  # this process's pool: idle from here, and out of the CLI's way
    if args.cli_reps:
        expected = (
            f"{count} member(s): {result.count('pass')} pass, {result.count('fail')} fail,"
            f" {result.count('none')} with no verdict, 0 not read"
        )
        compare_cli(folder, args.dir / "cli", args.cli_reps, expected, _pipeline)


if __name__ == "__main__":
    main()
