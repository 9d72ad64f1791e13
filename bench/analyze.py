"""`analyze` against DuckDB reading the same file itself and against a shell pipeline, on a
generated run history and a generated STA report pair.

    .venv/bin/python bench/analyze.py [--rows 200000] [--paths 10000] [--reps 7] [--json FILE]

Interleaved, medians: Warrant's `analyze` (the record read through Warrant's reader, hashed and
checked against its admitted sha256, copied to a private file, loaded, external access turned
off, the query run, 200 rows kept) beside bare DuckDB running the same query with `read_csv` on the
file, and `awk … | sort` computing the same failures per test. On the STA pair, `analyze`'s
worst-slack change per endpoint (both reports parsed by Warrant's STA reader) beside `grep -c
slack`, as `bench/sta.py` measures `stadiff` (shown, not held to the baseline: at these sizes
grep's few milliseconds are mostly its start). What the ratio over bare DuckDB prices is Warrant's
proof of which bytes were read, its whole-file type sniffing and its sandbox.

The sandbox's own price, apart: a query over no table (`select 42`) in the sandbox's process of
its call (a fork of the tools' forkserver, its memory bounded, waited for and reaped) beside the
same connection, settings and query run in this process.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import duckdb

from bench.report import write_ratios
from lab.stagen import report_pair, write_report
from scenario.reading import reading
from scenario.registry import load_scenario
from tools.analysis import analyze, worker
from tools.analysis.query import AnalyzeArgs
from tools.analysis.sandbox import run_query

MANIFEST = """\
id = "BENCH"
profile = "sta"
[[record]]
id = "h"
kind = "history"
path = "history.csv"
[[record]]
id = "before"
kind = "sta_report"
path = "before.rpt"
[[record]]
id = "after"
kind = "sta_report"
path = "after.rpt"
"""
FAILS = "select test, count(*) as fails from h where status = 'FAIL' group by test order by test"
WORSE = (
    "with wa as (select endpoint, min(slack) as s from a group by endpoint),"
    " wb as (select endpoint, min(slack) as s from b group by endpoint)"
    " select endpoint, round(wa.s - wb.s, 3) as delta from wa join wb using (endpoint)"
    " order by delta limit 20"
)
TRIVIAL = "select 42"
AWK = (
    'awk -F, \'NR > 1 && $4 == "FAIL" {n[$3]++} END {for (t in n) print t "," n[t]}\' {file} | sort'
)


def write_history(path: Path, rows: int) -> None:
    rng = random.Random(11)
    tests = [f"t{number:04d}" for number in range(500)]
    with path.open("w") as out:
        out.write("run,date,test,status,seed,signature\n")
        for number in range(rows):
            failed = rng.random() < 0.07
            status = "FAIL" if failed else "PASS"
            signature = f"ERR{rng.randrange(40)}" if failed else ""
            out.write(
                f"N{number // 500},2026-11-01,{rng.choice(tests)},{status},{rng.randrange(10**6)},{signature}\n"
            )


def timed(function: Callable[..., Any], *args: Any) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def shell(command: str) -> None:
    subprocess.run(command, shell=True, stdout=subprocess.DEVNULL, check=True)


def governed(args: AnalyzeArgs, records: dict[str, Any]) -> None:
    with reading(None) as session:
        analyze.run(args, records)
        session.verify()


def bare(query: str, tables: dict[str, Path]) -> None:
    connection = duckdb.connect(":memory:")
    for name, path in tables.items():
        connection.execute(
            f"create table {name} as select * from read_csv(?, header = true)", [str(path)]
        )
    connection.execute(query).fetchmany(200)
    connection.close()


def sandboxed(query: str) -> None:
    run_query(query, [])


def in_process(query: str, spill: str) -> None:
    worker.run(worker.Job(query, (), spill))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--paths", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="warrant-analyze-") as folder:
        root = Path(folder)
        write_history(root / "history.csv", options.rows)
        before, after = report_pair(paths_per_group=max(1, options.paths // 6))
        write_report(root / "before.rpt", before)
        write_report(root / "after.rpt", after)
        (root / "m.toml").write_text(MANIFEST)
        scenario = load_scenario(root / "m.toml")
        history = {"tables.h": scenario.records["h"]}
        pair = {"tables.a": scenario.records["after"], "tables.b": scenario.records["before"]}
        fails = AnalyzeArgs(query=FAILS, tables={"h": "h"})
        worse = AnalyzeArgs(query=WORSE, tables={"a": "after", "b": "before"})
        awk = AWK.replace("{file}", str(root / "history.csv"))
        files = [str(root / "before.rpt"), str(root / "after.rpt")]
        times: dict[str, list[float]] = {
            key: [] for key in ("h", "h_duckdb", "h_awk", "sta", "grep", "child", "inline")
        }
        sandboxed(TRIVIAL)  # the forkserver started, as a served process finds it
        for _ in range(options.reps):
            times["child"].append(timed(sandboxed, TRIVIAL))
            times["inline"].append(timed(in_process, TRIVIAL, folder))
            times["h"].append(timed(governed, fails, history))
            times["h_duckdb"].append(timed(bare, FAILS, {"h": root / "history.csv"}))
            times["h_awk"].append(timed(shell, awk))
            times["sta"].append(timed(governed, worse, pair))
            times["grep"].append(timed(shell, " ".join(["grep", "-c", "slack", *files])))
        m = {key: statistics.median(values) for key, values in times.items()}
    print(f"analyze on generated inputs (medians of {options.reps} interleaved runs)\n")
    print(
        "| input | analyze | bare DuckDB | shell pipeline | analyze / DuckDB | analyze / pipeline |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| history, {options.rows} rows: failures per test | {m['h'] * 1000:.0f} ms | {m['h_duckdb'] * 1000:.0f} ms | {m['h_awk'] * 1000:.0f} ms (awk, sort) | {m['h'] / m['h_duckdb']:.2f}× | {m['h'] / m['h_awk']:.2f}× |"
    )
    print(
        f"| STA pair, {len(after)} paths each: worst-slack change per endpoint | {m['sta'] * 1000:.0f} ms | | {m['grep'] * 1000:.0f} ms (grep -c slack) | | {m['sta'] / m['grep']:.1f}× |"
    )
    print(
        f"\nthe sandbox's process: `{TRIVIAL}` in it {m['child'] * 1000:.0f} ms, in this process"
        f" {m['inline'] * 1000:.0f} ms ({m['child'] / m['inline']:.2f}×)"
    )
    write_ratios(
        options.json,
        {
            f"analyze, {options.rows} history rows: analyze / bare DuckDB": m["h"] / m["h_duckdb"],
            f"analyze, {options.rows} history rows: analyze / awk pipeline": m["h"] / m["h_awk"],
            "analyze, select 42: sandbox's process / in process": m["child"] / m["inline"],
        },
    )


if __name__ == "__main__":
    main()
