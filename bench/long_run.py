"""Long runs: does a run's cost grow with its length? Storage and time per step at 30, 300, 1,000.

    .venv/bin/python bench/long_run.py [--steps 30,300,1000] [--reps 3] [--postgres postgresql://…/postgres]

A chooser makes N distinct `searchlogs` calls on one approved log (the lab's R42 log), then stops;
each run goes through `graph.runs.runner.start` as `warrant run` does (`durability="sync"`, under its
lease), on a fresh SQLite file and in a fresh PostgreSQL database. Storage per step is what the run
left in the database divided by its steps (SQLite: the file and its WAL after a checkpoint;
PostgreSQL: the checkpoint tables' rows of the thread and the store's rows: its record and bodies); time per step is taken between successive
proposals, over the first and the last 30 steps. The peer is the same run at 30 steps: a record
whose cost does not grow keeps both ratios near 1. Each length runs `--reps` times, taking turns
with the other lengths (the machine's speed drifts over a long run); the table shows medians, and
the median of each run's own last / first.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg

from graph.delivery.artifacts import deliver
from graph.runs.requests import admit_request
from graph.runs.runner import start
from lab import LAB_DIR

WINDOW = 30
MANIFEST = """id = "LONG"
profile = "triage"
goal = "How does the record grow?"
[budget]
steps = {steps}
evidence = {steps}
deadline_s = 86400
[[record]]
id = "log"
kind = "log"
path = "r42.log"
"""


def scenario(folder: Path, steps: int) -> tuple[Path, Path]:
    """A manifest approving one log, and an action file of `steps - 1` distinct calls and a stop."""
    shutil.copy(LAB_DIR / "runs" / "R42" / "reset_smoke.log", folder / "r42.log")
    manifest = folder / "long.toml"
    manifest.write_text(MANIFEST.format(steps=steps))
    actions = folder / "actions.jsonl"
    calls = [
        {
            "summary": f"search {n}",
            "tool_calls": [
                {
                    "id": f"c{n}",
                    "name": "searchlogs",
                    "args": {"path": "log", "query": f"UVM_{n}", "limit": 20},
                }
            ],
        }
        for n in range(1, steps)
    ]
    stop = {"summary": "stop", "message": {"kind": "stop", "text": "done"}}
    actions.write_text("\n".join(json.dumps(doc) for doc in [*calls, stop]) + "\n")
    return manifest, actions


def timed_run(db: str, manifest: Path, actions: Path) -> tuple[str, list[float]]:
    """The run's thread and the time of each proposal."""
    request = admit_request(
        str(manifest), None, f"file:{actions}", f"long-{uuid.uuid4().hex[:8]}", None
    )
    proposals: list[float] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "proposed":
            proposals.append(time.perf_counter())

    outcome = start(request, db, on_event, on_end=deliver)
    assert outcome.values["handover"]["status"] == "stopped", outcome.values["handover"]["status"]
    return request.thread_id, proposals


def sqlite_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(file.stat().st_size for file in path.parent.glob(path.name + "*") if file.is_file())


def postgres_bytes(url: str, thread: str) -> int:
    """The thread's checkpoint rows and every row of the store (the database is the run's own:
    its record and the bodies it wrote)."""
    with psycopg.connect(url) as conn:
        checkpoints = sum(
            conn.execute(
                f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t WHERE thread_id = %s",
                (thread,),
            ).fetchone()[0]
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        )
        store = conn.execute(
            "SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM store t"
        ).fetchone()[0]
        return checkpoints + store


def per_step(proposals: list[float]) -> tuple[float, float]:
    """Median seconds per step over the first and the last WINDOW steps."""
    gaps = [later - earlier for earlier, later in itertools.pairwise(proposals)]
    return statistics.median(gaps[:WINDOW]), statistics.median(gaps[-WINDOW:])


def measure(backend: str, steps: int, admin: str | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        manifest, actions = scenario(Path(folder), steps)
        if backend == "sqlite":
            db = str(Path(folder) / "long.sqlite")
            thread, proposals = timed_run(db, manifest, actions)
            stored = sqlite_bytes(Path(db))
        else:
            name = f"warrant_long_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            db = admin.rsplit("/", 1)[0] + f"/{name}"
            try:
                thread, proposals = timed_run(db, manifest, actions)
                stored = postgres_bytes(db, thread)
            finally:
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    first, last = per_step(proposals)
    return {"kib_per_step": stored / steps / 1024, "first_ms": first * 1000, "last_ms": last * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="30,300,1000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    lengths = [int(part) for part in args.steps.split(",")]
    print(f"medians of {args.reps} runs per row\n")
    print(
        "| store | steps | KiB per step | vs 30 steps | ms/step, first 30 | ms/step, last 30 | last / first |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for backend in ("sqlite", "postgres"):
        runs: dict[int, list[dict[str, float]]] = {steps: [] for steps in lengths}
        for rep in range(args.reps):
            for steps in lengths:
                print(f"{backend}: {steps} steps, run {rep + 1}…", file=sys.stderr, flush=True)
                runs[steps].append(measure(backend, steps, args.postgres))
        base = None
        for steps in lengths:
            row = {
                key: statistics.median(run[key] for run in runs[steps]) for key in runs[steps][0]
            }
            growth = statistics.median(run["last_ms"] / run["first_ms"] for run in runs[steps])
            base = base or row
            print(
                f"| {backend} | {steps} | {row['kib_per_step']:.1f} | {row['kib_per_step'] / base['kib_per_step']:.2f}× "
                f"| {row['first_ms']:.1f} | {row['last_ms']:.1f} | {growth:.2f}× |",
                flush=True,
            )


if __name__ == "__main__":
    main()
