"""Where a served run's time goes: py-spy samples of one `warrant serve` replica while runs are
waited for one at a time, each sample given to the part of the server or of Warrant it was in.

    .venv/bin/python bench/profile_served.py [--runs 40] [--postgres postgresql://…/postgres] [--out FILE]

The scripted 9-turn run of `bench/governed_step.py` (a `file:` chooser on the same script, as
`bench/throughput.py --served`), on its own database and Redis db. py-spy (`pip install py-spy`)
samples every thread of the replica, idle ones included (`--idle`); a sample belongs to the
innermost frame that names a part (`PARTS`), and a thread waiting for work (a pool thread for a
task, the event loop for its next event) is idle. The tables give each part's share of the busy
samples of all the replica's threads, and of the event loop's thread alone (the main thread: HTTP,
the server, the checkpointer and the store's own calls all run there).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
from langgraph_sdk import get_sync_client

from bench.governed_step import TURNS, bench_lab
from bench.throughput import SERVE_PYTHON, served_given

PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "a node waiting for a store call (sent through the event loop)",
        ("AsyncBatchedBaseStore.batch",),
    ),
    (
        "a node's own store calls (their synchronous pool)",
        ("ServedStore.batch", "ServedStore.count_attempt"),
    ),
    ("Warrant: auth handler", ("graph/server/auth.py",)),
    ("Warrant: the tools' reads", ("(tools/",)),
    ("Warrant: nodes, guard, seals, record", ("(nodes/", "(guards/", "(contract/", "(graph/")),
    ("store calls (the record)", ("AsyncPostgresStore",)),
    ("checkpointer (Warrant's saver)", ("AsyncPostgresSaver", "_checkpointer/")),
    ("LangGraph loop", ("(pregel/", "(_internal/", "(channels/")),
    (
        "runtime: PostgreSQL and Redis (run rows, queue)",
        ("langgraph_runtime", "(redis/", "(sqlalchemy/", "(asyncpg/"),
    ),
    ("server: runs API, streaming", ("langgraph_api/",)),
    ("HTTP (uvicorn, starlette)", ("uvicorn/", "starlette/", "h11/", "httptools")),
    ("langchain_core callbacks and config", ("langchain_core/",)),
    ("PostgreSQL driver, its caller not in the stack", ("(psycopg/",)),
)
IDLE_LEAVES = ("_worker (concurrent/futures/thread.py:81)", "Runner.run (asyncio/runners.py")
"""Where a thread waits for work: a pool thread for a task, the event loop for its next event."""


@contextmanager
def one_replica(admin_url: str, folder: Path) -> Iterator[tuple[str, int]]:
    """`warrant serve --replicas 1` on its own database and Redis db; (URL, replica pid)."""
    name = f"warrant_profile_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    subprocess.run(["redis-cli", "-n", "11", "flushdb"], check=True, capture_output=True)
    env = {key: value for key, value in os.environ.items() if key != "WARRANT_DB"}
    env |= {
        "DATABASE_URI": admin_url.rsplit("/", 1)[0] + f"/{name}",
        "REDIS_URI": "redis://127.0.0.1:6379/11",
        "WARRANT_CHOOSER_DIR": str(folder),
        "WARRANT_SCENARIO_ROOTS": str(folder),
    }
    command = [str(SERVE_PYTHON.with_name("warrant")), "serve", "--port", "8870"]
    supervisor = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert supervisor.stdout is not None
        line = supervisor.stdout.readline().split()  # replica 1  URL  pid P
        yield line[2], int(line[4])
    finally:
        os.killpg(supervisor.pid, signal.SIGTERM)
        supervisor.wait(timeout=60)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def part_of(frames: list[str]) -> str:
    """The part of the innermost frame that names one (leaf first), or "idle" for a thread
    waiting for work."""
    if not frames or frames[-1].startswith(IDLE_LEAVES):
        return "idle"
    for frame in reversed(frames):
        for part, marks in PARTS[:-1]:
            if any(mark in frame for mark in marks):
                return part
    if any(mark in frame for frame in frames for mark in PARTS[-1][1]):
        return PARTS[-1][0]  # the driver, called by none of the parts above
    if "wait" in frames[-1] or "select" in frames[-1]:
        return "idle"  # a thread of no part waiting (a pool's workers, the sampler's)
    return "other"


def split(raw: str) -> tuple[Counter[str], Counter[str]]:
    """Samples per part over all threads, and over the event loop's thread (the one running
    uvicorn)."""
    every: Counter[str] = Counter()
    loop: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        part = part_of(frames[1:])  # the first is the thread
        every[part] += int(count)
        if "MainThread" in frames[0]:
            loop[part] += int(count)
    return every, loop


def table(title: str, samples: Counter[str]) -> list[str]:
    busy = sum(count for part, count in samples.items() if part != "idle")
    lines = [f"| {title} | busy share |", "| --- | ---: |"]
    for part, count in samples.most_common():
        if part != "idle" and count:
            lines.append(f"| {part} | {count / busy:.0%} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--out", type=Path, help="also write the tables to this file")
    parser.add_argument("--raw", type=Path, help="also keep py-spy's samples (folded stacks)")
    args = parser.parse_args()
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        sys.exit("bench/profile_served.py needs py-spy: .venv/bin/pip install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        given = served_given(folder, bench_lab(folder))
        with one_replica(args.postgres, folder) as (url, pid):
            client = get_sync_client(url=url)
            for _ in range(2):  # warm-up
                thread = client.threads.create()
                client.runs.wait(thread["thread_id"], "triage", input=given)
            raw = folder / "samples.txt"
            sampler = subprocess.Popen(
                [
                    *(str(spy), "record", "--pid", str(pid), "--format", "raw", "--idle"),
                    *("--threads", "--rate", "200", "--output", str(raw), "--nonblocking"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.0)
            started = time.perf_counter()
            for _ in range(args.runs):
                thread = client.threads.create()
                final = client.runs.wait(thread["thread_id"], "triage", input=given)
                assert isinstance(final, dict) and final.get("status") == "stopped", final
            elapsed = time.perf_counter() - started
            sampler.send_signal(signal.SIGINT)
            sampler.wait(timeout=60)
            text = raw.read_text()
            if args.raw:
                args.raw.write_text(text)
            every, loop = split(text)
    lines = [
        f"# Where a served run's time goes\n\n`bench/profile_served.py --runs {args.runs}`: one replica,"
        f" runs waited for one at a time: {args.runs * TURNS / elapsed:.0f} steps/s,"
        f" {elapsed / args.runs * 1000:.0f} ms a run of {TURNS} turns.\n",
        *table("part (every thread of the replica)", every),
        "",
        *table("part (the event loop's thread)", loop),
    ]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
