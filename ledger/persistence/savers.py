"""Checkpointers from `--db` (`memory`, a SQLite file, `postgresql://…`) and run leases.

A run is advanced by one worker at a time. On PostgreSQL the lease is a session advisory lock keyed
by the thread id, and the worker writes its checkpoints on the very connection that holds the lock:
if that session dies (crash, `pg_terminate_backend`, network loss), the lock is released and the
stale worker can no longer write anything — the fence is the session itself. On SQLite the lease is
an exclusive `flock` on a per-thread lock file, released by the kernel when the process dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ledger.persistence.lease import LeaseSaver, LeaseStore
from ledger.persistence.locations import is_postgres, redact
from ledger.persistence.pruning import PrunablePostgresSaver, PrunableSqliteSaver
from ledger.persistence.sqlite_lease import SqliteRecordSaver, SqliteRecordStore
from ledger.store import CONTROL, space

_Opened = TypeVar("_Opened")
SETUP_LOCK_KEY = 0x5741_5252_414E_5401  # serialises concurrent first-time setup() calls


class StorageUnavailable(RuntimeError):
    """The checkpoint store cannot be opened or reached (exit code 4)."""


class RunBusy(RuntimeError):
    """Another worker holds the run's lease."""


def pool_size() -> int:
    """Connections per process: a lease per concurrent run plus readers, bounded by the cores."""
    return max(4, 2 * (os.cpu_count() or 1) + 2)


class Storage(NamedTuple):
    """Where runs are kept: checkpoints (the state) and the store (each run's record, `ledger.store`),
    in the same database. `compile_graph(*storage)` binds both."""

    saver: BaseCheckpointSaver[str]
    store: BaseStore


@contextmanager
def open_saver(db: str) -> Iterator[Storage]:
    """Checkpoints and store for reading and managing runs (no lease)."""
    if db == "memory":
        yield Storage(InMemorySaver(), InMemoryStore())
    elif is_postgres(db):
        with postgres_pool(db) as pool:
            yield Storage(PrunablePostgresSaver(pool), PostgresStore(pool))
    else:
        with _sqlite_saver(Path(db)) as saver, sqlite_store(Path(db)) as store:
            yield Storage(saver, store)


@contextmanager
def open_run(db: str, thread_id: str) -> Iterator[Storage]:
    """Checkpoints and store that may advance `thread_id`, holding its lease; raises `RunBusy`.
    On PostgreSQL the checkpoints and the record are written on the lease's own connection (a
    worker that lost its lease writes neither), and readers never read past the committed cursor.
    A step's record is written with its checkpoint (`ledger.persistence.lease`,
    `ledger.persistence.sqlite_lease`)."""
    if db == "memory":
        yield Storage(InMemorySaver(), InMemoryStore())
    elif is_postgres(db):
        with postgres_pool(db) as pool, postgres_lease(pool, thread_id) as storage:
            yield storage
    else:
        with _file_lease(Path(db), thread_id), sqlite_store(Path(db)) as store:
            record = SqliteRecordStore(store)
            with _sqlite(Path(db), lambda conn: _set_up_saver(conn, record)) as saver:
                yield Storage(saver, record)
                record.flush()  # what waits for a write that never came (nothing, after a step)


@contextmanager
def postgres_pool(
    url: str, max_size: int | None = None
) -> Iterator[ConnectionPool[psycopg.Connection[DictRow]]]:
    """A health-checked pool with the checkpoint tables set up; unreachable → `StorageUnavailable`."""
    try:  # fail fast: a pool would keep retrying a refused connection until its timeout
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        raise StorageUnavailable(
            f"cannot reach PostgreSQL at {redact(url)}: {_first_line(exc)}"
        ) from None
    pool: ConnectionPool[psycopg.Connection[DictRow]] = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size or pool_size(),
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        check=ConnectionPool.check_connection,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=10)
        with pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK_KEY,))
            try:
                PostgresSaver(conn).setup()
                PostgresStore(conn).setup()
                install_postgres_fence(conn)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))
    except (PoolTimeout, psycopg.OperationalError) as exc:
        pool.close()
        raise StorageUnavailable(
            f"cannot reach PostgreSQL at {redact(url)}: {_first_line(exc)}"
        ) from None
    try:
        yield pool
    finally:
        pool.close()


@contextmanager
def postgres_lease(
    pool: ConnectionPool[psycopg.Connection[DictRow]], thread_id: str
) -> Iterator[Storage]:
    """Hold the thread's advisory lock on one connection, and write the run's checkpoints and its
    record (the store) on that connection only: a worker that lost its session writes nothing.

    The saver and the store share one (reentrant) lock, since one connection holds one pipeline
    at a time (parallel tasks write the store at once); a step's record is sent in its
    checkpoint's round trip (`ledger.persistence.lease`)."""
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS held", (thread_id,)
        ).fetchone()
        assert row is not None  # a SELECT without FROM returns its one row
        if not row["held"]:
            raise RunBusy(f"run {thread_id!r} is being advanced elsewhere; try again when it stops")
        conn.execute("SELECT set_config('application_name', %s, false)", (lease_name(thread_id),))
        try:
            # The savers declare a `threading.Lock` and only ever enter it; a reentrant one serves.
            store = PostgresStore(conn)
            store.lock = threading.RLock()  # type: ignore[assignment]
            record = LeaseStore(store, watched=lambda thread: space(thread, CONTROL))  # a stop
            yield Storage(LeaseSaver(conn, record), record)
            record.flush()  # what waits for a write that never came (nothing, after a step)
        finally:
            # If the session is gone, so is its lock; nothing to release.
            with contextlib.suppress(psycopg.Error):
                conn.execute(
                    "SELECT pg_advisory_unlock_all(), set_config('application_name', '', false)"
                )


def lease_name(thread_id: str) -> str:
    """The `application_name` of the session holding a thread's lease (at most 63 bytes)."""
    return f"warrant-lease:{hashlib.sha256(thread_id.encode()).hexdigest()[:40]}"


@contextmanager
def _file_lease(db: Path, thread_id: str) -> Iterator[None]:
    folder = db.parent / f"{db.name}.leases"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = (folder / f"{hashlib.sha256(thread_id.encode()).hexdigest()[:40]}.lock").open("a")
    except OSError as exc:
        raise StorageUnavailable(f"cannot open SQLite database {db}: {exc}") from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunBusy(
                f"run {thread_id!r} is being advanced elsewhere; try again when it stops"
            ) from None
        yield


@contextmanager
def _sqlite_saver(path: Path) -> Iterator[PrunableSqliteSaver]:
    with _sqlite(path, _set_up_saver) as saver:
        yield saver


def _set_up_saver(
    connection: sqlite3.Connection, record: SqliteRecordStore | None = None
) -> PrunableSqliteSaver:
    """LangGraph's saver with the fence; a leased run's (`record` given) writes its record in
    its checkpoints' transactions (`ledger.persistence.sqlite_lease`)."""
    saver = SqliteRecordSaver(connection, record) if record else PrunableSqliteSaver(connection)
    saver.setup()
    install_sqlite_fence(connection)
    return saver


@contextmanager
def sqlite_store(path: Path) -> Iterator[SqliteStore]:
    """The store on its own connection to the same file (each has its own lock and transactions),
    in autocommit mode as `SqliteStore.from_conn_string` makes it."""
    with _sqlite(path, _set_up_store, isolation_level=None, factory=_WriterConnection) as store:
        yield store


class _WriterConnection(sqlite3.Connection):
    """A connection whose explicit transactions take the write lock when they begin. A store batch
    that reads and then writes (a call's intent) would otherwise fail at once with "database is
    locked" whenever the checkpointer committed between its read and its write: in WAL mode a
    transaction cannot upgrade a snapshot that is no longer the latest, and no busy wait helps."""

    def execute(self, sql: str, *parameters: Any) -> sqlite3.Cursor:
        return super().execute("BEGIN IMMEDIATE" if sql == "BEGIN" else sql, *parameters)


def _set_up_store(connection: sqlite3.Connection) -> SqliteStore:
    # The store's commits need not sync the WAL themselves: every store write is followed by the
    # checkpoint that refers to it, whose commit (synchronous=FULL, on the saver's connection)
    # syncs the one WAL file both connections append to, these frames included. A write whose
    # checkpoint never came is one the node writes again when it runs again.
    connection.execute("PRAGMA synchronous=NORMAL")
    store = SqliteStore(connection)
    store.setup()
    return store


@contextmanager
def _sqlite(
    path: Path, set_up: Callable[[sqlite3.Connection], _Opened], **options: Any
) -> Iterator[_Opened]:
    """A WAL-mode connection to the SQLite file with `set_up` applied to it, closed afterwards;
    a file that cannot be opened or set up is `StorageUnavailable`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False, timeout=30, **options)
    except (OSError, sqlite3.Error) as exc:
        raise StorageUnavailable(f"cannot open SQLite database {path}: {exc}") from None
    try:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            opened = set_up(connection)
        except (OSError, sqlite3.Error) as exc:
            raise StorageUnavailable(f"cannot open SQLite database {path}: {exc}") from None
        yield opened
    finally:
        connection.close()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# The fence: one line of checkpoints per thread, whoever writes it.

FENCE_MESSAGE = "warrant: the run was advanced by another worker"
FENCE_INSTALLED = "SELECT 1 FROM pg_trigger WHERE tgname = 'warrant_fence'"
POSTGRES_FENCE = (
    f"""
CREATE OR REPLACE FUNCTION warrant_fence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('warrant-fence:' || NEW.thread_id || ':' || NEW.checkpoint_ns, 0));
  IF EXISTS (
    SELECT 1 FROM checkpoints c
    WHERE c.thread_id = NEW.thread_id AND c.checkpoint_ns = NEW.checkpoint_ns
      AND c.checkpoint_id > coalesce(NEW.parent_checkpoint_id, '') AND c.checkpoint_id <> NEW.checkpoint_id
  ) THEN
    RAISE EXCEPTION '{FENCE_MESSAGE} (thread %)', NEW.thread_id USING ERRCODE = 'serialization_failure';
  END IF;
  RETURN NEW;
END $$""",
    """CREATE OR REPLACE TRIGGER warrant_fence BEFORE INSERT ON checkpoints
FOR EACH ROW EXECUTE FUNCTION warrant_fence()""",
)
SQLITE_FENCE = f"""
CREATE TRIGGER IF NOT EXISTS warrant_fence BEFORE INSERT ON checkpoints
WHEN EXISTS (
  SELECT 1 FROM checkpoints c
  WHERE c.thread_id = NEW.thread_id AND c.checkpoint_ns = NEW.checkpoint_ns
    AND c.checkpoint_id > coalesce(NEW.parent_checkpoint_id, '') AND c.checkpoint_id <> NEW.checkpoint_id
)
BEGIN SELECT RAISE(ROLLBACK, '{FENCE_MESSAGE}'); END;
"""
"""A checkpoint is written only as the successor of the thread's latest one. Two workers that
continue the same thread from the same checkpoint (a served run and `warrant resume`, two
replicas) cannot both write: the second one's write fails and it stops; the checkpoints never
fork. A trigger, so that it holds for every writer of the tables, LangGraph's own savers included.
Forking from an older checkpoint (time travel) is refused the same way. On SQLite the refused
write also ends its transaction (`ROLLBACK`, not `ABORT`): a saver that does not roll back on an
error (the server's asynchronous one) would otherwise keep the database's write lock, and every
other writer would wait out its busy timeout and fail `database is locked`."""
FORK_REFUSED = (
    f"{FENCE_MESSAGE}: a Warrant run goes on from its latest checkpoint only and is never forked"
    " from an earlier one (checkpoint_id is refused)"
)
"""The fence's answer to a request that names a checkpoint to start from."""
SQLITE_FENCE_SQL = "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'warrant_fence'"


def is_old_fence(installed: str | None) -> bool:
    """Whether the trigger found is an older one, to be made again (see `install_sqlite_fence`)."""
    return installed is not None and "RAISE(ROLLBACK" not in installed


def install_postgres_fence(conn: psycopg.Connection[DictRow]) -> None:
    """Once per database (under the setup lock): a trigger, made again only when it is missing."""
    if conn.execute(FENCE_INSTALLED).fetchone():
        return
    for statement in POSTGRES_FENCE:
        conn.execute(statement)


def install_sqlite_fence(connection: sqlite3.Connection) -> None:
    """The trigger, made again when a database holds an older one (an `ABORT` fence keeps the
    write lock after refusing a write)."""
    installed = connection.execute(SQLITE_FENCE_SQL).fetchone()
    if is_old_fence(installed[0] if installed else None):
        connection.execute("BEGIN IMMEDIATE")  # no write slips between the two triggers
        connection.execute("DROP TRIGGER warrant_fence")
    connection.execute(SQLITE_FENCE)
    connection.commit()


def is_fenced_out(exc: BaseException) -> bool:
    return FENCE_MESSAGE in str(exc)
