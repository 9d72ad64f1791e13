"""STA parse and diff throughput on generated report pairs, against `grep -c slack`.

    .venv/bin/python bench/sta.py [--paths 10000,100000] [--stages 0,20] [--reps 3]

For each size and path depth (cells listed per path: 0 is the lab pair's layout, 20 is closer to a
real design's paths) a before/after pair is generated (`lab/stagen.py`) and deleted afterwards;
interleaved: `stasummary` of the after report (one scan), `stadiff` of the pair (two scans and an
endpoint index), and `grep -c slack` over both files. Peak RSS (VmHWM) of a `stadiff` in a fresh process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from lab.stagen import report_pair, write_report
from scenario.reading import reading
from scenario.registry import load_scenario
from tools.sta import diff as stadiff
from tools.sta import summary as sta

MANIFEST = 'id = "B"\nprofile = "sta"\n[[record]]\nid = "before"\nkind = "sta_report"\npath = "before.rpt"\n[[record]]\nid = "after"\nkind = "sta_report"\npath = "after.rpt"\n'
PROBE = """
import sys
sys.path.insert(0, {root!r})
from tools.sta import diff as stadiff
from scenario.registry import load_scenario
s = load_scenario(__import__("pathlib").Path({manifest!r}))
stadiff.stadiff(stadiff.DiffArgs(before="before", after="after"), {{"before": s.records["before"], "after": s.records["after"]}})
# VmHWM is this process's own peak; ru_maxrss would include the parent's, copied at fork
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def timed(action: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    started = time.perf_counter()
    action(*args, **kwargs)
    return time.perf_counter() - started


def executed(tool: Callable[..., Any], *args: Any) -> None:
    """As the executor runs a tool: in a reading session, every file it read hashed to its end
    and checked against the admitted sha256 afterwards (`scenario/reading.py`)."""
    with reading(None) as session:
        tool(*args)
        session.verify()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="10000,100000")
    parser.add_argument("--stages", default="0,20")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    args = parser.parse_args()
    root = str(Path(__file__).resolve().parent.parent)
    rows = []
    sizes = [
        (int(paths), int(stages))
        for stages in args.stages.split(",")
        for paths in args.paths.split(",")
    ]
    for count, stages in sizes:
        with tempfile.TemporaryDirectory(dir=".") as folder:
            before, after = report_pair(paths_per_group=max(1, count // 6), stages=stages)
            write_report(Path(folder) / "before.rpt", before)
            write_report(Path(folder) / "after.rpt", after)
            (Path(folder) / "m.toml").write_text(MANIFEST)
            scenario = load_scenario(Path(folder) / "m.toml")
            records = {"before": scenario.records["before"], "after": scenario.records["after"]}
            files = [str(Path(folder) / "before.rpt"), str(Path(folder) / "after.rpt")]
            times: dict[str, list[float]] = {"summary": [], "diff": [], "grep": []}
            for _ in range(args.reps):
                times["summary"].append(
                    timed(
                        executed,
                        sta.stasummary,
                        sta.ReportArgs(report="after"),
                        {"report": records["after"]},
                    )
                )
                times["diff"].append(
                    timed(
                        executed,
                        stadiff.stadiff,
                        stadiff.DiffArgs(before="before", after="after"),
                        records,
                    )
                )
                times["grep"].append(
                    timed(subprocess.run, ["grep", "-c", "slack", *files], stdout=subprocess.PIPE)
                )
            probe = PROBE.format(root=root, manifest=str(Path(folder) / "m.toml"))
            peak = int(
                subprocess.run(
                    [sys.executable, "-c", probe], capture_output=True, text=True, check=True
                ).stdout
            )
            size = sum(Path(file).stat().st_size for file in files) / (1 << 20)
            rows.append(
                (
                    len(before),
                    stages,
                    size,
                    {name: statistics.median(values) for name, values in times.items()},
                    peak / 1024,
                )
            )
    print(f"STA tools on generated report pairs (medians of {args.reps} interleaved runs)\n")
    print(
        "| paths per report | cells per path | pair size | stasummary (after) | stadiff (pair) | grep -c slack (pair) | stadiff / grep | stadiff process peak RSS |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios = {}
    for paths, stages, size, m, peak in rows:
        ratios[f"sta, {paths} paths, {stages} cells: stadiff / grep -c slack"] = (
            m["diff"] / m["grep"]
        )
        print(
            f"| {paths} | {stages} | {size:.0f} MiB | {m['summary']:.2f} s | {m['diff']:.2f} s | {m['grep']:.3f} s | {m['diff'] / m['grep']:.1f}× | {peak:.0f} MiB |"
        )
    write_ratios(args.json, ratios)


if __name__ == "__main__":
    main()
