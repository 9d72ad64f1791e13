"""Durable throughput: governed steps per second on PostgreSQL (`durability="sync"`, leases held).

    .venv/bin/python bench/throughput.py [--runs 32] [--rounds 3] [--postgres postgresql://…/postgres]
        [--served]  # also through `warrant serve` (the `[serve]` extra in .venv-serve)

The scripted 9-turn run of `governed_step.py` (a step is a chooser turn, as there), each run under
its lease: one run at a time in one process, 4 and 16 concurrent runs in one process (threads), and one
worker process per core each advancing its own runs one at a time. The configurations take
turns for `--rounds` rounds (the machine's other load drifts; interleaving spreads it over
all); the table shows the medians and the median of each round's ratio to one run at a time.

`--served` adds the same runs through the LangGraph server (`warrant serve`, PostgreSQL and Redis),
started by `langgraph_sdk` and waited for: with 1 and 2 replicas, one thread at a time and 20
concurrent threads; each replica set on its own database and Redis db, both up for the whole bench
so that their rounds interleave with the embedded ones. The scripted chooser is a `file:` chooser
there (the server builds its own context), on the same script.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from multiprocessing.pool import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
from langgraph_sdk import get_sync_client
from psycopg_pool import ConnectionPool

from bench.governed_step import CALLS, TURNS, bench_lab
from graph.build import compile_graph
from ledger.context import WarrantContext
from ledger.persistence.savers import postgres_lease, postgres_pool
from nodes.choosers import ScriptedChooser

SCRIPT = [
    {"summary": name, "tool_calls": [{"id": f"c{n}", "name": name, "args": args}]}
    for n, (name, args) in enumerate(CALLS, 1)
]
SCRIPT.append({"summary": "stop", "message": {"kind": "stop", "text": "done"}})
CONTEXT = WarrantContext(choosers={"bench": ScriptedChooser(SCRIPT)})
CONCURRENCY = {
    "1 process, 1 run at a time": 1,
    "1 process, 4 concurrent runs": 4,
    "1 process, 16 concurrent runs": 16,
}


def one_run(pool: ConnectionPool, manifest: Path) -> None:
    thread = uuid.uuid4().hex
    with postgres_lease(pool, thread) as storage:
        state = compile_graph(*storage).invoke(
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


def worker(args: tuple[str, str, int, float]) -> tuple[float, float]:
    """Warm up, wait for the common start, run; returns when this worker started and finished."""
    url, manifest, runs, start_at = args
    with postgres_pool(url, max_size=3) as pool:
        one_run(pool, Path(manifest))
        late = time.time() > start_at
        time.sleep(max(0.0, start_at - time.time()))
        started = time.time()
        for _ in range(runs):
            one_run(pool, Path(manifest))
    if late:
        print(f"warning: worker {os.getpid()} was ready after the common start", file=sys.stderr)
    return started, time.time()


def ready(_: int) -> int:
    """A worker process that is up (its imports done); slow enough that every worker gets one."""
    time.sleep(0.2)
    return os.getpid()


def processes_per_second(processes: Pool, cores: int, url: str, manifest: Path, runs: int) -> float:
    """Each worker process advances `runs // cores` runs; all start at one time (after warm-up)."""
    start_at = time.time() + 5
    spans = processes.map(worker, [(url, str(manifest), runs // cores, start_at)] * cores)
    first, last = min(start for start, _ in spans), max(end for _, end in spans)
    return (runs // cores) * cores * TURNS / (last - first)


SERVED_THREADS = {"1 thread at a time": 1, "20 concurrent threads": 20}
SERVE_PYTHON = Path(__file__).resolve().parent.parent / ".venv-serve" / "bin" / "python"


@contextmanager
def replica_set(count: int, admin_url: str, folder: Path) -> Iterator[list[str]]:
    """`warrant serve --replicas count` on its own database and Redis db (12 + count), ports from
    8790 + 10 × count; yields the replicas' URLs."""
    redis_db, port = 12 + count, 8790 + 10 * count
    name = f"warrant_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    subprocess.run(["redis-cli", "-n", str(redis_db), "flushdb"], check=True, capture_output=True)
    env = {key: value for key, value in os.environ.items() if key != "WARRANT_DB"}
    env |= {
        "DATABASE_URI": admin_url.rsplit("/", 1)[0] + f"/{name}",
        "REDIS_URI": f"redis://127.0.0.1:6379/{redis_db}",
        "WARRANT_CHOOSER_DIR": str(folder),
        "WARRANT_SCENARIO_ROOTS": str(folder),
    }
    command = [
        str(SERVE_PYTHON.with_name("warrant")),
        "serve",
        "--replicas",
        str(count),
        "--port",
        str(port),
    ]
    supervisor = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert supervisor.stdout is not None
        yield [supervisor.stdout.readline().split()[2] for _ in range(count)]
    finally:
        os.killpg(supervisor.pid, signal.SIGTERM)
        supervisor.wait(timeout=60)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def served_steps_per_second(
    urls: list[str], given: dict[str, str], runs: int, threads: int
) -> float:
    """`runs` runs, `threads` at a time, spread over the replicas, each waited for to its end."""
    clients = [get_sync_client(url=url) for url in urls]

    def one(number: int) -> None:
        client = clients[number % len(clients)]
        thread = client.threads.create()
        final = client.runs.wait(thread["thread_id"], "triage", input=given)
        assert isinstance(final, dict) and final.get("status") == "stopped", str(final)[:500]

    one(0)  # warm-up
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as executor:
        list(executor.map(one, range(runs)))
    return runs * TURNS / (time.perf_counter() - started)


def served_given(folder: Path, manifest: Path) -> dict[str, str]:
    script = folder / "script.jsonl"
    script.write_text("".join(json.dumps(turn) + "\n" for turn in SCRIPT))
    return {"scenario": str(manifest), "chooser": f"file:{script}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--served", action="store_true", help="also through `warrant serve`")
    args = parser.parse_args()
    name = f"warrant_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.postgres, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = args.postgres.rsplit("/", 1)[0] + f"/{name}"
    cores = os.cpu_count() or 1
    label = f"{cores} worker processes (one per core)"
    rates: dict[str, list[float]] = {key: [] for key in (*CONCURRENCY, label)}
    try:
        with (
            tempfile.TemporaryDirectory() as folder,
            multiprocessing.get_context("spawn").Pool(cores) as processes,
            ExitStack() as served,
        ):
            manifest = bench_lab(Path(folder))
            given = served_given(Path(folder), manifest)
            sets = {
                replicas: served.enter_context(replica_set(replicas, args.postgres, Path(folder)))
                for replicas in ((1, 2) if args.served else ())
            }
            while len(set(processes.map(ready, range(2 * cores), chunksize=1))) < cores:
                pass  # not every worker process is up yet
            for _ in range(args.rounds):
                for key, concurrency in CONCURRENCY.items():
                    rates[key].append(steps_per_second(url, manifest, args.runs, concurrency))
                rates[label].append(
                    processes_per_second(processes, cores, url, manifest, args.runs)
                )
                for replicas, urls in sets.items():
                    for key, threads in SERVED_THREADS.items():
                        row = f"served, {replicas} replica{'s' if replicas > 1 else ''}, {key}"
                        rates.setdefault(row, []).append(
                            served_steps_per_second(urls, given, args.runs, threads)
                        )
    finally:
        with psycopg.connect(args.postgres, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(
        f"Governed steps per second on PostgreSQL ({args.runs} runs of {TURNS} turns each per configuration and round, "
        f"{args.rounds} rounds, durability=sync, leases held)\n"
    )
    print("| configuration | steps/s | runs/s | vs one run at a time |")
    print("| --- | ---: | ---: | ---: |")
    single = rates[next(iter(CONCURRENCY))]
    for key, values in rates.items():
        ratio = statistics.median(value / base for value, base in zip(values, single, strict=True))
        rate = statistics.median(values)
        print(f"| {key} | {rate:.0f} | {rate / TURNS:.1f} | {ratio:.2f}× |")


if __name__ == "__main__":
    main()
