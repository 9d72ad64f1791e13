"""The benches in a quick mode, each ratio against its same-run peer held to the committed baseline.

    .venv/bin/python bench/ratios.py [--only NAME,…] [--update]

Runs each bench of `QUICK` with small inputs (about a minute on two cores), prints its tables
and then every ratio it measured (Warrant's time over its peer's, measured in the same run: lower is
better) beside `bench/baseline.json`'s. Exits 1 when a ratio is worse than its baseline by more than
`TOLERANCE` (30%), or when a ratio of the baseline was not measured (a bench that stopped measuring
is not a bench that got faster). A ratio over the line is measured up to twice more, its bench run
again, and the best counts: one slow moment of a shared machine is not a regression. Absolute
times are never compared. `--update` measures every bench three times and writes the median of
each ratio as the new baseline (commit it with the change that moved them, and say why in the
issue note).

`.ci/run` runs this after the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "bench" / "baseline.json"
TOLERANCE = 0.30
QUICK: dict[str, list[str]] = {
    "governed_step": ["bench/governed_step.py", "--reps", "15"],
    "sta": ["bench/sta.py", "--paths", "10000", "--stages", "0,20", "--reps", "5"],
    "searchlogs": ["bench/searchlogs.py", "--sizes", "100M", "--reps", "7", "--dir", "{tmp}"],
    "triage": [
        "bench/triage.py",
        "--logs",
        "300",
        "--mb",
        "48",
        "--reps",
        "7",
        "--cli-reps",
        "0",
        "--dir",
        "{tmp}",
    ],
    "memory_recall": ["bench/memory_recall.py", "--notes", "1000", "--reps", "15"],
    "analyze": ["bench/analyze.py", "--rows", "100000", "--paths", "5000", "--reps", "7"],
    "startup": ["bench/startup.py", "--reps", "5", "--dir", "{tmp}"],
}
"""Each bench's quick command (from the project root, `{tmp}` a scratch folder of its own)."""


def measure(name: str) -> dict[str, float]:
    """Run one bench quickly, its tables shown; the ratios it wrote."""
    with tempfile.TemporaryDirectory(prefix=f"warrant-{name}-") as tmp:
        out = Path(tmp) / "ratios.json"
        command = [arg.replace("{tmp}", tmp) for arg in QUICK[name]]
        print(f"\n## {name}: {' '.join(command)}\n", flush=True)
        subprocess.run(
            [sys.executable, *command, "--json", str(out)], cwd=ROOT, check=True, timeout=900
        )
        ratios: dict[str, float] = json.loads(out.read_text())["ratios"]
    return ratios


def over(measured: float, baseline: float) -> bool:
    return measured > baseline * (1 + TOLERANCE)


def verdicts(
    measured: dict[str, float], baseline: dict[str, float]
) -> list[tuple[str, float | None, float | None, str]]:
    """(ratio, measured, baseline, verdict) for every ratio of either."""
    rows: list[tuple[str, float | None, float | None, str]] = []
    for key in sorted(measured.keys() | baseline.keys()):
        now, then = measured.get(key), baseline.get(key)
        if now is None:
            verdict = "NOT MEASURED"
        elif then is None:
            verdict = "new"
        elif over(now, then):
            verdict = f"WORSE by more than {TOLERANCE:.0%}"
        else:
            verdict = "ok"
        rows.append((key, now, then, verdict))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated benches of QUICK")
    parser.add_argument("--update", action="store_true", help="write the ratios as the baseline")
    args = parser.parse_args()
    names = [name for name in args.only.split(",") if name] or list(QUICK)
    if unknown := [name for name in names if name not in QUICK]:
        sys.exit(f"unknown bench {unknown[0]!r}; one of {', '.join(QUICK)}")
    stored = json.loads(BASELINE.read_text()) if BASELINE.exists() else {"ratios": {}}
    baseline: dict[str, float] = stored["ratios"]
    measured: dict[str, float] = {}
    for name in names:
        if args.update:  # the median of three
            rounds = [measure(name) for _ in range(3)]
            measured |= {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
        else:
            measured |= measure(name)
    if not args.update:
        for name in names:  # over the line: measured up to twice more, the best counts
            for _ in range(2):
                again = [key for key in measure_keys(measured, name) if key in baseline]
                if not any(over(measured[key], baseline[key]) for key in again):
                    break
                print(f"\n{name}: a ratio over its baseline; measured again", flush=True)
                for key, value in measure(name).items():
                    measured[key] = min(measured.get(key, value), value)
    in_scope = {key: value for key, value in baseline.items() if _bench_of(key) in names}
    rows = verdicts(measured, in_scope)
    print("\n| ratio (Warrant / same-run peer) | measured | baseline | verdict |")
    print("| --- | ---: | ---: | --- |")
    for key, now, then, verdict in rows:
        shown = [f"{value:.2f}×" if value is not None else "–" for value in (now, then)]
        print(f"| {key} | {shown[0]} | {shown[1]} | {verdict} |")
    if args.update:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        kept = {key: value for key, value in baseline.items() if _bench_of(key) not in names}
        BASELINE.write_text(
            json.dumps({"measured": stamp, "ratios": kept | measured}, indent=2) + "\n"
        )
        print(f"\nbaseline written: {BASELINE.relative_to(ROOT)}")
        return
    failed = [row for row in rows if row[3] not in ("ok", "new")]
    if failed:
        sys.exit(f"\n{len(failed)} ratio(s) worse than the baseline allows: {failed[0][0]}, …")
    print(f"\nall {len(rows)} ratios within {TOLERANCE:.0%} of the baseline")


def measure_keys(measured: dict[str, float], name: str) -> list[str]:
    return [key for key in measured if _bench_of(key) == name]


_PREFIXES = {
    "governed step": "governed_step",
    "sta": "sta",
    "searchlogs": "searchlogs",
    "triage": "triage",
    "memory recall": "memory_recall",
    "analyze": "analyze",
    "startup": "startup",
}


def _bench_of(key: str) -> str:
    """The bench a ratio's name comes from (its words before the first comma or colon)."""
    return _PREFIXES.get(key.split(",", 1)[0].split(":", 1)[0], "")


if __name__ == "__main__":
    main()
