"""recall over a team's notes against `grep -i` over the same notes as a text file, in the same run.

    .venv/bin/python bench/memory_recall.py [--notes 100,1000,10000] [--reps 5] [--postgres URL]

For each count: that many notes are saved (`nodes.memory.save`) in a fresh SQLite store (and a
fresh PostgreSQL schema when `--postgres` is given), one of them holding the signature looked for;
the same texts are written one per line to a file. Timed, interleaved: `memory.recall` of a
two-word query (every word, case-insensitive: what a chooser's `recall` runs) against
`grep -i -F` of one of the words over the file (grep checks one word; recall checks both). Medians.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from langgraph.store.base import BaseStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import write_ratios
from nodes import memory

SCOPE = memory.Scope("bench")
QUERY = "RST_CHK clk_en"


def note_text(number: int) -> str:
    return f"run R{number}: fifo_basic overflow at depth {number % 64}, seed {number * 7919 % 100003}; tracked as BUG-{number}"


@contextmanager
def sqlite_store(folder: Path) -> Iterator[BaseStore]:
    with SqliteStore.from_conn_string(str(folder / f"{uuid.uuid4().hex}.db")) as store:
        store.setup()
        yield store


@contextmanager
def postgres_store(url: str) -> Iterator[BaseStore]:
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        with PostgresStore.from_conn_string(f"{url}?options=-csearch_path%3D{schema}") as store:
            store.setup()
            yield store
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def fill(store: BaseStore, count: int, lines: Path) -> None:
    texts = [note_text(n) for n in range(count - 1)]
    texts.insert(
        count // 2, "RST_CHK clk_en late after release: seen in R38, R40-R42; tracked as BUG-1234"
    )
    for number, text in enumerate(texts):
        memory.save(store, SCOPE, text, "bench", float(number))
    lines.write_text("\n".join(texts) + "\n")


def median_s(run: object, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(store: BaseStore, count: int, folder: Path, reps: int) -> tuple[float, float]:
    lines = folder / f"notes-{count}.txt"
    fill(store, count, lines)
    found = memory.recall(store, [SCOPE], QUERY)
    grep = subprocess.run(
        ["grep", "-i", "-F", "rst_chk", str(lines)], capture_output=True, text=True
    )
    assert len(found) == 1 and grep.stdout.count("\n") == 1, (len(found), grep.stdout)
    recall_s = median_s(lambda: memory.recall(store, [SCOPE], QUERY), reps)
    grep_s = median_s(
        lambda: subprocess.run(["grep", "-i", "-F", "rst_chk", str(lines)], capture_output=True),
        reps,
    )
    return recall_s, grep_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", default="100,1000,10000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--postgres", default="")
    parser.add_argument("--json", type=Path, help="also write the ratios to this file")
    options = parser.parse_args()
    stores = {"sqlite": sqlite_store}
    if options.postgres:
        stores["postgresql"] = lambda _folder: postgres_store(options.postgres)  # type: ignore[assignment]
    print("| notes | store | recall (ms) | grep -i -F (ms) | recall / grep |")
    print("| ---: | --- | ---: | ---: | ---: |")
    ratios = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for count in (int(text) for text in options.notes.split(",")):
            for name, opened in stores.items():
                with opened(folder) as store:
                    recall_s, grep_s = measure(store, count, folder, options.reps)
                print(
                    f"| {count:,} | {name} | {recall_s * 1000:.1f} | {grep_s * 1000:.1f} | {recall_s / grep_s:.1f} |",
                    flush=True,
                )
                ratios[f"memory recall, {count} notes, {name}: recall / grep -i -F"] = (
                    recall_s / grep_s
                )
    write_ratios(options.json, ratios)


if __name__ == "__main__":
    main()
