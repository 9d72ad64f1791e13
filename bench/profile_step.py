"""Where a governed step's time goes, on each backend: cProfile over `bench/governed_step.py`'s
scripted run, its time split by who spends it.

    .venv/bin/python bench/profile_step.py [--runs 40] [--postgres postgresql://…/postgres] [--out FILE]

Each function's own time goes to the part of the house or library its file belongs to; the time of
the standard library and of built-ins (a socket's wait, `sqlite3`'s `execute`, a regex search) goes
to whoever called them, in proportion to what each caller spent there. cProfile sees the thread
that runs the graph only: LangGraph writes checkpoints from a thread of its own, and the graph's
wait for them is shown as such. Profiling slows Python code
more than it slows waiting, so the shares are what matter; the table also gives the step's time
measured without the profiler, in the same run.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.governed_step import TURNS, bench_lab, warrant_runner
from bench.modes import modes_parser, savers

ROOT = str(Path(__file__).resolve().parent.parent)
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tools: the reads themselves (the peers run the same functions)", (f"{ROOT}/tools/",)),
    ("seals: sealing and checking the run's values", ("/guards/seal.py", "/ledger/integrity.py")),
    ("guard: deciding", (f"{ROOT}/guards/",)),
    (
        "record: ledger, receipts, intents (building the store's items)",
        (f"{ROOT}/ledger/", "/persistence/lease.py"),
    ),
    ("nodes and wiring: admission, chooser, execute, handover", (f"{ROOT}/",)),
    (
        "waiting for LangGraph's writer thread (checkpoints written, not profiled)",
        ("acquire' of '_thread.lock",),
    ),
    ("LangGraph store", ("/langgraph/store/",)),
    ("LangGraph checkpointer (serializing, its SQL)", ("/langgraph/checkpoint/",)),
    ("database: driver and round trips", ("/psycopg/", "/psycopg_pool/", "sqlite3.")),
    ("LangGraph loop (channels, tasks, config)", ("/langgraph/", "/langchain_core/")),
    ("pydantic", ("/pydantic/", "pydantic_core")),
)
OTHER = "other"

Func = tuple[str, int, str]


def part_of(func: Func) -> str | None:
    """The part a function's file belongs to; None for the standard library and built-ins
    (their time goes to their callers), except what names its library (`sqlite3.…`)."""
    filename, _, name = func
    where = filename if filename != "~" else name
    if filename != "~" and "site-packages" not in filename and not filename.startswith(ROOT + "/"):
        return None  # the standard library
    library = filename == "~" or "site-packages" in filename
    for part, marks in PARTS[:5] if not library else PARTS[5:]:
        if any(mark in where for mark in marks):
            return part
    return None if filename == "~" else OTHER


def split(stats: dict[Func, Any]) -> dict[str, float]:
    """Seconds per part: each function's own time, given to its part or, through its callers,
    to theirs."""
    shares: dict[Func, dict[str, float]] = {}

    def share_of(func: Func, depth: int = 0) -> dict[str, float]:
        """Fractions of `func`'s time that belong to each part."""
        if func in shares:
            return shares[func]
        part = part_of(func)
        if part is not None:
            result = {part: 1.0}
        elif depth > 12 or func not in stats:
            result = {OTHER: 1.0}
        else:
            callers = stats[func][4]
            total = sum(entry[2] for entry in callers.values()) or 0.0
            result = defaultdict(float)
            if total == 0.0:
                result[OTHER] = 1.0
            for caller, entry in callers.items():
                if total:
                    for name, fraction in share_of(caller, depth + 1).items():
                        result[name] += fraction * entry[2] / total
            result = dict(result)
        shares[func] = result
        return result

    seconds: dict[str, float] = defaultdict(float)
    for func, (_, _, own, _, _) in stats.items():
        for name, fraction in share_of(func).items():
            seconds[name] += own * fraction
    return dict(seconds)


def profile_mode(manifest: Path, warrant: Any, runs: int) -> tuple[dict[str, float], float, float]:
    run = warrant_runner(manifest, warrant.saver, warrant.store)
    for n in range(5):
        run(f"warm-{n}-{uuid.uuid4().hex[:6]}")
    started = time.perf_counter()
    for n in range(runs):
        run(f"plain-{n}-{uuid.uuid4().hex[:6]}")
    plain = (time.perf_counter() - started) / runs / TURNS
    profiler = cProfile.Profile()
    profiler.enable()
    for n in range(runs):
        run(f"profiled-{n}-{uuid.uuid4().hex[:6]}")
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    seconds = split(stats)
    total = sum(seconds.values())
    return (
        {name: value / runs / TURNS for name, value in seconds.items()},
        total / runs / TURNS,
        plain,
    )


def table(mode: str, per_step: dict[str, float], profiled: float, plain: float) -> str:
    lines = [
        f"### {mode}",
        "",
        f"{plain * 1000:.2f} ms a step without the profiler, {profiled * 1000:.2f} ms with it.",
        "",
        "| part | ms a step (profiled) | share |",
        "| --- | ---: | ---: |",
    ]
    names = [part for part, _ in PARTS] + [OTHER]
    for name in sorted(names, key=lambda name: -per_step.get(name, 0.0)):
        value = per_step.get(name, 0.0)
        if value:
            lines.append(f"| {name} | {value * 1000:.2f} | {value / profiled:.0%} |")
    return "\n".join(lines)


def main() -> None:
    parser = modes_parser(__doc__)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--out", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    sections = [
        f"# Where a governed step's time goes\n\n`bench/profile_step.py --runs {args.runs}`: "
        f"{args.runs} scripted runs of {TURNS} turns per backend, Python {sys.version.split()[0]}.\n"
    ]
    with tempfile.TemporaryDirectory() as folder:
        manifest = bench_lab(Path(folder))
        with savers(Path(folder), args.postgres or None) as modes:
            for mode, _, warrant in modes:
                per_step, profiled, plain = profile_mode(manifest, warrant, args.runs)
                sections.append(table(mode, per_step, profiled, plain))
                print(sections[-1] + "\n", flush=True)
    if args.out:
        args.out.write_text("\n\n".join(sections) + "\n")


if __name__ == "__main__":
    main()
