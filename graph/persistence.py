"""Choosing the checkpointer from `--db`: `memory`, a SQLite file (the default), or Postgres."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg import OperationalError
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

DEFAULT_DB = ".warrant/warrant.sqlite"


class StorageUnavailable(RuntimeError):
    """The checkpoint store cannot be opened or reached (exit code 4)."""


def default_db() -> str:
    return os.environ.get("WARRANT_DB") or DEFAULT_DB


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """A database URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


@contextmanager
def open_saver(db: str) -> Iterator[BaseCheckpointSaver]:
    """The checkpointer named by `db`, set up and closed on exit."""
    if db == "memory":
        yield InMemorySaver()
    elif is_postgres(db):
        with _postgres_saver(db) as saver:
            yield saver
    else:
        with _sqlite_saver(Path(db)) as saver:
            yield saver


@contextmanager
def _sqlite_saver(path: Path) -> Iterator[SqliteSaver]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        saver = SqliteSaver(connection)
        saver.setup()
    except (OSError, sqlite3.Error) as exc:
        raise StorageUnavailable(f"cannot open SQLite database {path}: {exc}") from None
    try:
        yield saver
    finally:
        connection.close()


@contextmanager
def _postgres_saver(url: str) -> Iterator[PostgresSaver]:
    """A pooled PostgresSaver; `autocommit` is required by `setup()` and by the saver's writes."""
    try:  # fail fast: a pool would keep retrying a refused connection until its timeout
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        raise StorageUnavailable(
            f"cannot reach PostgreSQL at {redact(url)}: {_first_line(exc)}"
        ) from None
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=4,
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=5)
        saver = PostgresSaver(pool)
        saver.setup()
    except (PoolTimeout, OperationalError) as exc:
        pool.close()
        raise StorageUnavailable(
            f"cannot reach PostgreSQL at {redact(url)}: {_first_line(exc)}"
        ) from None
    try:
        yield saver
    finally:
        pool.close()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
