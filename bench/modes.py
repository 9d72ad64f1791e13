"""The persistence modes the benches compare in: no checkpointer, `InMemorySaver`, SQLite and
PostgreSQL (`durability="sync"`), each with the checkpointer the peers share and the storage
Warrant's run writes (as `warrant run` opens it)."""

from __future__ import annotations

import argparse
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.memory import InMemoryStore

from ledger.persistence.savers import Storage, open_run, postgres_lease, postgres_pool

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"


def modes_parser(doc: str) -> argparse.ArgumentParser:
    """A bench's parser, described by the first line of its `doc`, with the `--postgres` URL that
    `savers` takes ('' compares without PostgreSQL)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--postgres", default=LOCAL_POSTGRES, help="'' to skip")
    return parser


def durability(saver: Any) -> dict[str, str]:
    """`durability="sync"` with a checkpointer (LangGraph refuses it without one)."""
    return {"durability": "sync"} if saver is not None else {}


def thread_config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@contextmanager
def savers(folder: Path, postgres: str | None) -> Iterator[list[tuple[str, Any, Storage]]]:
    """Each mode's checkpointer for the peers, and the checkpointer and store Warrant's run writes
    in that mode (as `ledger.persistence.savers.open_run` opens them for `warrant run`: the run's
    lease, whose saver writes a step's record with its checkpoint; the peers keep no record and
    use LangGraph's saver as it comes)."""
    sqlite_conn = sqlite3.connect(folder / "bench.sqlite", check_same_thread=False)
    sqlite_conn.execute("PRAGMA journal_mode=WAL")
    sqlite_saver = SqliteSaver(sqlite_conn)
    sqlite_saver.setup()
    with open_run(str(folder / "bench.sqlite"), "bench") as leased:
        memory = InMemorySaver()
        modes: list[tuple[str, Any, Storage]] = [
            ("none", None, Storage(None, InMemoryStore())),  # type: ignore[arg-type]
            ("memory", memory, Storage(memory, InMemoryStore())),
            ("sqlite", sqlite_saver, leased),
        ]
        if not postgres:
            yield modes
            return
        with postgres_modes(postgres) as served:
            yield [*modes, *served]


@contextmanager
def postgres_modes(postgres: str) -> Iterator[list[tuple[str, Any, Storage]]]:
    name = f"warrant_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = postgres.rsplit("/", 1)[0] + f"/{name}"
    try:
        with postgres_pool(url) as pool, postgres_lease(pool, "bench") as storage:
            yield [("postgres", PostgresSaver(pool), storage)]
    finally:
        with psycopg.connect(postgres, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def checkpoints(saver: Any, thread: str) -> int:
    return len(list(saver.list(thread_config(thread)))) if saver is not None else 0
