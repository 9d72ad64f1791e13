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
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
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


# Through the CLI: `warrant run` with a triage call, against `warrant run` with only a stop.

CLI_MANIFEST = """\
id = "BENCH-CLI"
profile = "triage"
goal = "Triage the family."

[budget]
steps = 4
evidence = 4
deadline_s = 3600
call_s = 3600

[[record]]
glob = "*.log"
kind = "log"
"""
TRIAGE_THEN_STOP = (
    {
        "summary": "triage",
        "tool_calls": [{"id": "c1", "name": "triage", "args": {"family": "*.log"}}],
    },
    {"summary": "stop", "message": {"kind": "stop", "text": "done"}},
)
STOP_ONLY = TRIAGE_THEN_STOP[1:]
SAMPLE_S = 0.05
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None  # GNU time, for %M
OWN_NAME = Path("/proc/self/comm").read_text().strip()


class _Tree:
    """Every process descended from `root` while it runs, with its depth under `root` (found by
    parent id in /proc every `SAMPLE_S`, and kept once found: an orphan is still followed), each
    one's peak resident memory (VmHWM as last read: it only grows, so a sample misses only growth
    in a process's last `SAMPLE_S`), and the largest sum of the tree's VmRSS at one sample."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.depth = {root: 0}
        self.peaks: dict[int, int] = {}  # pid: VmHWM, KiB
        self.total_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        live = {self.root}
        while not self._stop.is_set():
            for pid, ppid in _parents():
                if ppid in live and pid not in self.depth:
                    self.depth[pid] = self.depth[ppid] + 1
                    live.add(pid)
            total = 0
            for pid in list(live):
                status = _status(pid)
                if status is None:
                    live.discard(pid)
                    continue
                if not self.depth[pid] and status["Name"] == OWN_NAME:
                    continue  # the root not yet exec'd: still this process's memory
                self.peaks[pid] = max(self.peaks.get(pid, 0), status["VmHWM"])
                total += status["VmRSS"]
            self.total_kib = max(self.total_kib, total)
            self._stop.wait(SAMPLE_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def at(self, depth: int) -> list[int]:
        """The peaks of the processes `depth` below the root, largest first."""
        found = (kib for pid, kib in self.peaks.items() if self.depth[pid] == depth)
        return sorted(found, reverse=True)


def _parents() -> Iterator[tuple[int, int]]:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            yield int(entry.name), int(stat.rsplit(")", 1)[1].split()[1])


def _status(pid: int) -> dict[str, Any] | None:
    """`Name`, `VmHWM` and `VmRSS` (KiB) of a live process; None once it is gone (a zombie has
    no VmHWM: it counts as gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found: dict[str, Any] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "Name":
            found[key] = value.strip()
        elif key in ("VmHWM", "VmRSS"):
            found[key] = int(value.split()[0])
    return found if "VmHWM" in found else None


@dataclass
class _CliRun:
    seconds: float
    done: dict[str, Any]
    main_kib: int  # `warrant run`'s peak: GNU time's %M (else its sampled VmHWM)
    children_kib: list[int]  # its children's (the forkserver, the resource tracker): sampled
    workers_kib: list[int]  # the pool workers' (the forkserver's children): sampled
    total_kib: int  # the tree's largest sampled sum of VmRSS

    @property
    def largest_kib(self) -> int:
        return max([self.main_kib, *self.children_kib, *self.workers_kib])


def _warrant_run(manifest: Path, actions: Path, scratch: Path) -> _CliRun:
    """`warrant run MANIFEST --chooser file:ACTIONS --db FRESH.sqlite --json -q` (under GNU time
    when there is one), timed from the spawn to its exit, its process tree sampled meanwhile."""
    fresh = scratch / f"run-{time.time_ns()}"  # a fresh database, and whatever it keeps beside it
    fresh.mkdir()
    db = fresh / "warrant.sqlite"
    out, err, rss = scratch / "run.json", scratch / "run.err", scratch / "run.maxrss"
    warrant = Path(sys.executable).with_name("warrant")
    command = [str(warrant), "run", str(manifest), "--chooser", f"file:{actions}"]
    command += ["--db", str(db), "--json", "-q"]
    if TIME:  # its own peak, exactly: a child of a small process, not of this one
        command = [TIME, "-f", "%M", "-o", str(rss), *command]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr)
        tree = _Tree(process.pid)
        process.wait()
        seconds = time.perf_counter() - started
    time.sleep(3 * SAMPLE_S)  # the forkserver, orphaned, exits on its own
    tree.stop()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)}: exit {process.returncode}\n{err.read_text()}")
    shutil.rmtree(fresh)
    top = 1 if TIME else 0
    main_kib = int(rss.read_text().split()[-1]) if TIME else max(tree.at(0), default=0)
    return _CliRun(
        seconds,
        json.loads(out.read_text()),
        main_kib,
        tree.at(top + 1),
        tree.at(top + 2),
        tree.total_kib,
    )


def _cli(folder: Path, scratch: Path, reps: int, expected: str) -> None:
    """(1) the pipeline, (2) `warrant run` with a triage call then a stop, (3) `warrant run`
    with only a stop (the same manifest: the same admission, every member hashed), in turns,
    after one untimed warm-up of (2) and (3); triage through the CLI is (2) − (3)."""
    scratch.mkdir(parents=True, exist_ok=True)
    manifest = folder / "bench-cli.toml"
    manifest.write_text(CLI_MANIFEST)
    both, stop = scratch / "triage-then-stop.jsonl", scratch / "stop.jsonl"
    both.write_text("".join(json.dumps(action) + "\n" for action in TRIAGE_THEN_STOP))
    stop.write_text("".join(json.dumps(action) + "\n" for action in STOP_ONLY))

    def check(run: _CliRun, triaged: bool) -> _CliRun:
        assert run.done["status"] == "stopped", run.done["status"]
        evidence = run.done["evidence"]
        if not triaged:
            assert not evidence, evidence
            return run
        assert [item["tool"] for item in evidence] == ["triage"], evidence
        assert evidence[0]["summary"].startswith(expected), (evidence[0]["summary"], expected)
        return run

    warm_both = check(_warrant_run(manifest, both, scratch), True)
    warm_stop = check(_warrant_run(manifest, stop, scratch), False)
    pipes, boths, stops = [], [], []
    for _ in range(reps):
        pipes.append(_pipeline(folder)[0])
        boths.append(check(_warrant_run(manifest, both, scratch), True))
        stops.append(check(_warrant_run(manifest, stop, scratch), False))
    pipe = statistics.median(pipes)
    with_triage = statistics.median(run.seconds for run in boths)
    stop_only = statistics.median(run.seconds for run in stops)
    through = with_triage - stop_only
    all_both, all_stop = [warm_both, *boths], [warm_stop, *stops]

    def mib(kib: int) -> str:
        return f"{kib / 1024:.0f}"

    def memory(runs: list[_CliRun]) -> str:
        return (
            f"{mib(max(run.largest_kib for run in runs))}"
            f" | {mib(max(run.total_kib for run in runs))}"
        )

    print(f"\n### through the CLI: `warrant run`, median of {reps} (after a warm-up, excluded)\n")
    print(
        "| what | seconds | × pipeline | peak RSS, largest process (MiB) | peak RSS, tree sum (MiB) |"
    )
    print("| --- | --- | --- | --- | --- |")
    print(f"| (1) shell pipeline | {pipe:.3f} | 1.00 | – | – |")
    print(
        f"| (2) `warrant run`: triage, then stop | {with_triage:.3f} | {with_triage / pipe:.2f}"
        f" | {memory(all_both)} |"
    )
    print(
        f"| (3) `warrant run`: stop only | {stop_only:.3f} | {stop_only / pipe:.2f}"
        f" | {memory(all_stop)} |"
    )
    print(
        f"| **triage through the CLI = (2) − (3)** | {through:.3f} | **{through / pipe:.2f}** | | |"
    )
    print(
        f"| warm-up (excluded): (2) {warm_both.seconds:.3f}, (3) {warm_stop.seconds:.3f}"
        f" | {warm_both.seconds - warm_stop.seconds:.3f}"
        f" | {(warm_both.seconds - warm_stop.seconds) / pipe:.2f} | | |"
    )
    print("\nper turn, seconds: (1) / (2) / (3) / (2) − (3)")
    for number, (seconds, one, other) in enumerate(zip(pipes, boths, stops, strict=True), 1):
        print(
            f"- {number}: {seconds:.3f} / {one.seconds:.3f} / {other.seconds:.3f}"
            f" / {one.seconds - other.seconds:.3f}"
        )
    measured = (
        "GNU time's %M: its own peak, or a descendant's it waited for if larger"
        if TIME
        else "its VmHWM, sampled"
    )

    def detail(runs: list[_CliRun]) -> str:
        children = max((run.children_kib for run in runs), key=lambda kib: max(kib, default=0))
        workers = max((run.workers_kib for run in runs), key=lambda kib: max(kib, default=0))
        return (
            f"`warrant run` {mib(max(run.main_kib for run in runs))} MiB; its other processes"
            f" (forkserver, resource tracker) {', '.join(map(mib, children)) or 'none'} MiB;"
            f" pool workers {', '.join(map(mib, workers)) or 'none'} MiB"
        )

    print(
        f"\npeak RSS over all {reps + 1} runs of each (warm-up included): (2) {detail(all_both)};"
        f" (3) {detail(all_stop)}. `warrant run`'s: {measured}; every other process in its tree"
        f" (found by parent id in /proc): its VmHWM, sampled every {SAMPLE_S * 1000:.0f} ms"
        f" until it exits; tree sum: the largest sum of the tree's VmRSS at one sample."
    )


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
        _cli(folder, args.dir / "cli", args.cli_reps, expected)


if __name__ == "__main__":
    main()
