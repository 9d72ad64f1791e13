"""The morning report's rendering time (graph/present/morning.py) for a nightly of many failing
tests, each renderer beside peers timed in the same run: `json.dumps` of the same report (what
`--json` prints) and a plain f-string table of the failing tests. Budget: 50 ms per renderer for
1,000 failing tests (issue 54).

    .venv/bin/python bench/morning_render.py [--failing 1000] [--reps 7]

The report is built here (a bucket per eight tests, long first error lines with brackets, a
history per test); each figure is the best of `--reps` runs of one call.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graph.present.morning import morning_html, morning_markdown, morning_text

BUDGET_MS = 50.0


def report_of(failing: int) -> dict[str, Any]:
    """A report of `failing` failing tests (and as many passing), a bucket per eight failures."""
    tests, buckets = [], []
    for index in range(failing):
        member = f"runs/N7/dma_burst_{index:05d}.log"
        bucket = f"B{index // 8 + 1}"
        text = (
            f"UVM_ERROR tb/env/scoreboard.sv(214) @ {index * 1000}: uvm_test_top.env.sb"
            f" [SB_MISMATCH] dma_burst_{index:05d}: read 0x{index:08x} expected 0x1 got 0x2"
        )
        error = {"member": member, "line": 800 + index % 97, "text": text}
        if index % 8 == 0:
            buckets.append(
                {
                    "id": bucket,
                    "count": 8,
                    "signature": "UVM_ERROR SB_MISMATCH read 0x<n> expected 0x<n> got 0x<n>",
                    "status": "known" if index % 16 else "new",
                    "first_seen": {"run": "N1", "date": "2026-11-19", "line": 2 + index},
                    "example": error,
                }
            )
        tests.append(
            {
                "test": f"dma_burst_{index:05d}",
                "member": member,
                "status": "fail",
                "bucket": bucket,
                "new": index % 3 == 0,
                "history": "PPPPPPF" if index % 3 == 0 else "PFPFPFF",
                "flaky": index % 3 != 0,
                "first_error": error,
            }
        )
    passing = [
        {**row, "test": f"ok_{at}", "status": "pass", "bucket": None, "first_error": None}
        for at, row in enumerate(tests)
    ]
    return {
        "summary": {
            "members": 2 * failing,
            "pass": failing,
            "fail": failing,
            "no_verdict": 0,
            "not_read": 0,
            "buckets": len(buckets),
            "new_failures": sum(row["new"] for row in tests),
        },
        "buckets": buckets,
        "tests": tests + passing,
        "no_verdict": [],
        "not_read": [],
    }


def best_ms(call: Callable[[], object], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def fstring_table(report: dict[str, Any]) -> str:
    """The peer: the failing tests as a plain f-string table, no fitting, no escaping."""
    rows = [
        f"{row['test']:<20} {row['bucket']:<6} L{row['first_error']['line']} {row['first_error']['text'][:60]}"
        for row in report["tests"]
        if row["status"] == "fail"
    ]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failing", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=7)
    options = parser.parse_args()
    report = report_of(options.failing)
    peers = {
        "json.dumps (peer)": lambda: json.dumps(report),
        "f-string table (peer)": lambda: fstring_table(report),
    }
    ours = {
        "morning_text": lambda: morning_text(report),
        "morning_markdown": lambda: morning_markdown(report),
        "morning_html": lambda: morning_html(report),
    }
    print(f"morning report, {options.failing} failing tests, best of {options.reps}:")
    for name, call in peers.items():
        print(f"  {name:<24} {best_ms(call, options.reps):8.1f} ms")
    over = []
    for name, call in ours.items():
        took = best_ms(call, options.reps)
        print(f"  {name:<24} {took:8.1f} ms  (budget {BUDGET_MS:.0f} ms)")
        if took > BUDGET_MS:
            over.append(name)
    if over:
        sys.exit(f"over budget: {', '.join(over)}")


if __name__ == "__main__":
    main()
