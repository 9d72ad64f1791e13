"""`warrant triage` of a nightly, as a whole process, against a whole-process shell pipeline that
answers the same question (which tests failed, under which first error, and which never failed
before), in the same run.

    .venv/bin/python bench/morning.py [--logs 1500] [--kb 160] [--reps 3] [--dir DIR] [--json F]

The nightly is `lab.nightly`'s (`runs/N7/*.log` and `history/runs.csv`), written once into
`--dir` (kept and reused) and read once so that every timed run finds it in the page cache. In
turns, `--reps` times after one untimed warm-up of each:

1. the pipeline (`PIPELINE`): each log's first error line (`grep -m1`), its numbers masked (`awk`),
   counted per signature (`sort | uniq -c`), and each failing test joined with the tests the
   history's rows name as failed (`awk` over the CSV), `NEW` or `known`: the morning report's
   question without its guard, ledger, verdicts or history lines;
2. `warrant triage FOLDER --json --db S` (a fresh SQLite database each time): drafting, admission
   (every member hashed), the guarded baseline run, its handover and the report, start-up included.

Prints the medians and the ratio (2) / (1); the issue's targets: ≤ 2× at 1,500 logs, ≤ 1.2× at
10,000 (`--logs 10000`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from lab.nightly import write_nightly

ROOT = Path(__file__).resolve().parent.parent
FIRST_ERROR = r"UVM_(ERROR|FATAL) |%Error|ERROR +cocotb|TEST FAILED"
PIPELINE = (
    f"grep -m1 -H -E '{FIRST_ERROR}' runs/N7/*.log"
    ' | awk \'{ i = index($0, ":"); t = substr($0, 1, i - 1); s = substr($0, i + 1);'
    ' sub(/^.*\\//, "", t); sub(/\\.log$/, "", t); gsub(/[0-9]+/, "N", s); print t "\\t" s }\''
    " > /tmp/.morning-first; cut -f2 /tmp/.morning-first | sort | uniq -c | sort -rn;"
    ' awk -F, \'NR == FNR { if (FNR > 1 && $4 == "FAIL") failed[$3] = 1; next }'
    ' { split($0, f, "\\t"); print f[1], (f[1] in failed ? "known" : "NEW") }\''
    " history/runs.csv /tmp/.morning-first"
)


def _nightly(folder: Path, logs: int, kb: int) -> None:
    marker = folder / f".complete-{logs}-{kb}"
    if marker.exists():
        return
    write_nightly(folder, logs, kb * 1000)
    marker.touch()


def _timed(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


def _warm(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            path.read_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=1500)
    parser.add_argument("--kb", type=int, default=160)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "warrant-morning")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    folder = args.dir / f"nightly-{args.logs}-{args.kb}"
    _nightly(folder, args.logs, args.kb)
    _warm(folder)
    warrant = str(Path(sys.executable).parent / "warrant")
    pipeline_s: list[float] = []
    triage_s: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        for rep in range(args.reps + 1):
            spent, piped = _timed(["bash", "-c", PIPELINE], folder)
            assert piped.returncode == 0, piped.stderr
            db = str(Path(scratch) / f"w{rep}.sqlite")
            command = [warrant, "triage", str(folder), "--json", "--db", db]
            took, triaged = _timed(command, ROOT)
            assert triaged.returncode == 0, triaged.stderr
            report = json.loads(triaged.stdout)["triage"]
            assert report["summary"]["members"] == args.logs, report["summary"]
            if rep:  # the first of each is the warm-up
                pipeline_s.append(spent)
                triage_s.append(took)
    pipeline, triage = statistics.median(pipeline_s), statistics.median(triage_s)
    ratio = triage / pipeline
    print(f"## morning: warrant triage of {args.logs} logs ({args.kb} KB each), whole processes\n")
    print("| run | median (s) |\n| --- | ---: |")
    print(f"| shell pipeline (first errors, buckets, new per test) | {pipeline:.2f} |")
    print(f"| `warrant triage --json` | {triage:.2f} |")
    print(f"\nwarrant triage / pipeline: {ratio:.2f}×")
    write_ratios(args.json, {f"morning, {args.logs} logs: warrant triage / pipeline": ratio})


if __name__ == "__main__":
    main()
