"""Durable throughput: governed steps per second on PostgreSQL (`durability="sync"`, leases held).

    .venv/bin/python bench/throughput.py [--runs 32] [--postgres postgresql://…/postgres]

The scripted 9-turn run of `governed_step.py`, each run under its lease: one run at a time in one
process, 16 concurrent runs in one process (threads), and one worker process per core each
advancing its own runs one at a time. Prints steps per second and the scaling of the processes.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg

from bench.governed_step import CALLS, TURNS, bench_lab
from graph.build import compile_graph
from graph.persistence import postgres_lease, postgres_pool
from nodes.choosers import ScriptedChooser
from nodes.context import WarrantContext

SCRIPT = [
    {"summary": name, "tool_calls": [{"id": f"c{n}", "name": name, "args": args}]}
    for n, (name, args) in enumerate(CALLS, 1)
]
SCRIPT.append({"summary": "stop", "message": {"kind": "stop", "text": "done"}})
CONTEXT = WarrantContext(choosers={"bench": ScriptedChooser(SCRIPT)})


def one_run(pool, manifest: Path) -> None:
    thread = uuid.uuid4().hex
    with postgres_lease(pool, thread) as saver:
        state = compile_graph(saver).invoke(
            {"scenario": str(manifest), "chooser": "bench"},
            {"configurable": {"thread_id": thread}},
            durability="sync",
            context=CONTEXT,
        )
    assert state["status"] == "stopped"


def steps_per_second(url: str, manifest: Path, runs: int, concurrency: int) -> float:
    with postgres_pool(url, max_size=concurrency + 2) as pool:
        one_run(pool, manifest)  # warm-up
        started = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as executor:
            list(executor.map(lambda _: one_run(pool, manifest), range(runs)))
        return runs * TURNS / (time.perf_counter() - started)


def worker(args: tuple[str, str, int, float]) -> float:
    """Warm up, wait for the common start, run; returns when this worker finished (epoch seconds)."""
    url, manifest, runs, start_at = args
    with postgres_pool(url, max_size=3) as pool:
        one_run(pool, Path(manifest))
        time.sleep(max(0.0, start_at - time.time()))
        for _ in range(runs):
            one_run(pool, Path(manifest))
    return time.time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=32)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    name = f"warrant_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.postgres, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = args.postgres.rsplit("/", 1)[0] + f"/{name}"
    cores = os.cpu_count() or 1
    try:
        with tempfile.TemporaryDirectory() as folder:
            manifest = bench_lab(Path(folder))
            single = steps_per_second(url, manifest, args.runs, 1)
            sixteen = steps_per_second(url, manifest, args.runs, 16)
            with multiprocessing.get_context("spawn").Pool(cores) as processes:
                start_at = time.time() + 15  # after every worker has imported and warmed up
                ends = processes.map(
                    worker, [(url, str(manifest), args.runs // cores, start_at)] * cores
                )
                multi = (args.runs // cores) * cores * TURNS / (max(ends) - start_at)
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(
        f"Governed steps per second on PostgreSQL ({args.runs} runs of {TURNS} turns each, durability=sync, leases held)\n"
    )
    print("| configuration | steps/s | vs one run at a time |")
    print("| --- | ---: | ---: |")
    print(f"| 1 process, 1 run at a time | {single:.0f} | 1.00× |")
    print(f"| 1 process, 16 concurrent runs | {sixteen:.0f} | {sixteen / single:.2f}× |")
    print(f"| {cores} worker processes (one per core) | {multi:.0f} | {multi / single:.2f}× |")


if __name__ == "__main__":
    main()
