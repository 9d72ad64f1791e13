"""Peak memory of `warrant run` over a record family of 10, 1,000 and 10,000 members.

    .venv/bin/python bench/family_memory.py [--members 10,1000,10000] [--reps 3] [--dir DIR]

Each family is a folder of small generated logs (`lab.nightly.write_family`, about `--bytes`
each), written once into `--dir` and reused; its manifest approves it with one `glob`. Each run is
a whole process: `warrant run MANIFEST --chooser file:… --db FRESH.sqlite --json -q` with a `file:`
chooser calling `triage` over the family and then stopping, under GNU time (`%M`: the process's
own peak resident memory; the pool's workers are other processes and are not counted). The runs
go in turns (one of each size per round), after one warm-up of each, excluded. The same-run
peer is the 10-member family's run: each size's peak is printed as a ratio of it. The code
measured is what `warrant` imports: the checkout on `PYTHONPATH` (`PYTHONPATH=$PWD` in the
checkout compared), else the installed package.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from bench.triage_cli import CLI_MANIFEST, TRIAGE_THEN_STOP
from lab.nightly import write_family

TIME = "/usr/bin/time"


def family(root: Path, count: int, member_bytes: int) -> Path:
    """The manifest of a family of `count` logs under `root` (written once, then reused)."""
    folder = root / f"{count}x{member_bytes}"
    marker = folder / ".complete"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        write_family(folder, count, member_bytes)
        marker.touch()
    manifest = folder / "bench.toml"
    manifest.write_text(CLI_MANIFEST)
    return manifest


def warrant_run(
    manifest: Path, actions: Path, scratch: Path
) -> tuple[int, float, dict[str, object]]:
    """`warrant run`'s own peak RSS (KiB, GNU time's `%M`), its seconds, and its handover."""
    fresh = Path(tempfile.mkdtemp(dir=scratch))
    peak, out = fresh / "maxrss", fresh / "run.json"
    warrant = Path(sys.executable).with_name("warrant")
    command = [TIME, "-f", "%M", "-o", str(peak), str(warrant), "run", str(manifest)]
    command += ["--chooser", f"file:{actions}", "--db", str(fresh / "w.sqlite"), "--json", "-q"]
    started = time.perf_counter()
    done = subprocess.run(command, stdout=out.open("wb"), stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode()}")
    handover = json.loads(out.read_text())
    kib = int(peak.read_text().split()[-1])
    shutil.rmtree(fresh)
    return kib, seconds, handover


def checked(handover: dict[str, object], count: int) -> None:
    """The run stopped with one triage receipt over every member: the run measured is the one meant."""
    assert handover["status"] == "stopped", handover["status"]
    evidence = handover["evidence"]
    assert isinstance(evidence, list) and [item["tool"] for item in evidence] == ["triage"]
    summary = evidence[0]["summary"]
    assert summary.startswith(f"{count} member(s)"), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", default="10,1000,10000")
    parser.add_argument("--bytes", type=int, default=2048, help="about this many bytes a member")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/warrant-family-memory"))
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    if not os.access(TIME, os.X_OK):
        raise SystemExit(f"{TIME} (GNU time) is needed for each run's peak RSS")
    counts = sorted({int(part) for part in args.members.split(",")} | {10})
    args.dir.mkdir(parents=True, exist_ok=True)
    manifests = {count: family(args.dir, count, args.bytes) for count in counts}
    actions = args.dir / "triage-then-stop.jsonl"
    actions.write_text("".join(json.dumps(action) + "\n" for action in TRIAGE_THEN_STOP))
    scratch = args.dir / "runs"
    scratch.mkdir(exist_ok=True)
    peaks: dict[int, list[int]] = {count: [] for count in counts}
    seconds: dict[int, list[float]] = {count: [] for count in counts}
    for round_ in range(args.reps + 1):
        for count in counts:
            kib, took, handover = warrant_run(manifests[count], actions, scratch)
            checked(handover, count)
            if round_:  # the first round warms the page cache and the digests: excluded
                peaks[count].append(kib)
                seconds[count].append(took)
    peer = statistics.median(peaks[10])
    print(f"## `warrant run` over a family: peak RSS, median of {args.reps} (warm-up excluded)\n")
    print("| members | peak RSS (MiB) | runs (MiB) | × 10 members | seconds |")
    print("| --- | --- | --- | --- | --- |")
    for count in counts:
        median = statistics.median(peaks[count])
        each = ", ".join(f"{kib / 1024:.0f}" for kib in peaks[count])
        print(
            f"| {count:,} | {median / 1024:.1f} | {each} | {median / peer:.2f}"
            f" | {statistics.median(seconds[count]):.2f} |"
        )
    print(
        "\npeak RSS: GNU time's %M of `warrant run` (its own process; the triage pool's workers"
        f" are not counted); members of about {args.bytes} bytes; {os.cpu_count()} cores"
    )
    write_ratios(
        args.json,
        {
            f"warrant run, {count} members / 10 members: peak RSS": statistics.median(peaks[count])
            / peer
            for count in counts
            if count != 10
        },
    )


if __name__ == "__main__":
    main()
