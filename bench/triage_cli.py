"""triage through the CLI, in turns: (1) the shell pipeline, (2) `warrant run` of a manifest
approving the family with a `file:` chooser calling `triage` then stopping, (3) the same with only
the stop; triage through the CLI is (2) − (3). Each run's memory: `warrant run`'s own peak from GNU
time's `%M`, every other process of its tree sampled from /proc (`bench/process_tree.py`). Run by
`bench/triage.py --cli-reps N`; its docstring says how each figure is taken."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.process_tree import SAMPLE_S, ProcessTree

Pipeline = Callable[[Path], tuple[float, str]]
"""The shell pipeline over a family's folder: its seconds and its output."""

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
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None  # GNU time, for %M


@dataclass
class CliRun:
    seconds: float
    done: dict[str, Any]
    main_kib: int  # `warrant run`'s peak: GNU time's %M (else its sampled VmHWM)
    children_kib: list[int]  # its children's (the forkserver, the resource tracker): sampled
    workers_kib: list[int]  # the pool workers' (the forkserver's children): sampled
    total_kib: int  # the tree's largest sampled sum of VmRSS

    @property
    def largest_kib(self) -> int:
        return max([self.main_kib, *self.children_kib, *self.workers_kib])


def warrant_run(manifest: Path, actions: Path, scratch: Path) -> CliRun:
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
        tree = ProcessTree(process.pid)
        process.wait()
        seconds = time.perf_counter() - started
    time.sleep(3 * SAMPLE_S)  # the forkserver, orphaned, exits on its own
    tree.stop()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)}: exit {process.returncode}\n{err.read_text()}")
    shutil.rmtree(fresh)
    top = 1 if TIME else 0
    main_kib = int(rss.read_text().split()[-1]) if TIME else max(tree.at(0), default=0)
    return CliRun(
        seconds,
        json.loads(out.read_text()),
        main_kib,
        tree.at(top + 1),
        tree.at(top + 2),
        tree.total_kib,
    )


def compare_cli(folder: Path, scratch: Path, reps: int, expected: str, pipeline: Pipeline) -> None:
    """(1) the pipeline, (2) `warrant run` with a triage call then a stop, (3) `warrant run`
    with only a stop (the same manifest: the same admission, every member hashed), in turns,
    after one untimed warm-up of (2) and (3); triage through the CLI is (2) − (3)."""
    scratch.mkdir(parents=True, exist_ok=True)
    manifest = folder / "bench-cli.toml"
    manifest.write_text(CLI_MANIFEST)
    both, stop = scratch / "triage-then-stop.jsonl", scratch / "stop.jsonl"
    both.write_text("".join(json.dumps(action) + "\n" for action in TRIAGE_THEN_STOP))
    stop.write_text("".join(json.dumps(action) + "\n" for action in STOP_ONLY))

    def check(run: CliRun, triaged: bool) -> CliRun:
        assert run.done["status"] == "stopped", run.done["status"]
        evidence = run.done["evidence"]
        if not triaged:
            assert not evidence, evidence
            return run
        assert [item["tool"] for item in evidence] == ["triage"], evidence
        assert evidence[0]["summary"].startswith(expected), (evidence[0]["summary"], expected)
        return run

    warm_both = check(warrant_run(manifest, both, scratch), True)
    warm_stop = check(warrant_run(manifest, stop, scratch), False)
    pipes, boths, stops = [], [], []
    for _ in range(reps):
        pipes.append(pipeline(folder)[0])
        boths.append(check(warrant_run(manifest, both, scratch), True))
        stops.append(check(warrant_run(manifest, stop, scratch), False))
    pipe = statistics.median(pipes)
    with_triage = statistics.median(run.seconds for run in boths)
    stop_only = statistics.median(run.seconds for run in stops)
    through = with_triage - stop_only
    all_both, all_stop = [warm_both, *boths], [warm_stop, *stops]

    def mib(kib: int) -> str:
        return f"{kib / 1024:.0f}"

    def memory(runs: list[CliRun]) -> str:
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

    def detail(runs: list[CliRun]) -> str:
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
