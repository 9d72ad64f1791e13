"""`warrant serve`: N replicas of the LangGraph server on one PostgreSQL and one Redis.

The schema is set up once, here, before any replica starts (the runtime's migrations, Warrant's
tables and fence); each replica is then its own process (`graph/server/replica.py`) on its own port, so
that one can die, or be killed, while the others go on serving the same threads.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from contract.errors import ErrorKind, WarrantError
from ledger.persistence.locations import SharedStorageRequired, redact, served_db
from ledger.persistence.savers import StorageUnavailable, postgres_pool

READY_S = 90.0


class ServeError(WarrantError):
    """A replica set that cannot start, in one line, by kind: a bad setting
    (`ErrorKind.BAD_INPUT`), a database, a port or a replica that cannot be used
    (`ErrorKind.UNREACHABLE`)."""


@dataclass(frozen=True)
class Replica:
    number: int
    url: str
    process: subprocess.Popen[bytes]


def environment(database_uri: str, redis_uri: str, base: Mapping[str, str]) -> dict[str, str]:
    """The replicas' environment: the runtime, its database and Redis, Warrant's database (the
    same PostgreSQL), and migrations left to `prepare`."""
    env = {
        **base,
        "LANGGRAPH_RUNTIME_EDITION": "pg",
        "DATABASE_URI": database_uri,
        "REDIS_URI": redis_uri,
        "LG_RUNTIME_PG_AUTO_MIGRATE": "false",
    }
    try:
        env["WARRANT_DB"] = served_db(env)
    except SharedStorageRequired as exc:
        raise ServeError(ErrorKind.BAD_INPUT, str(exc)) from None
    if not redis_uri.startswith(("redis://", "rediss://")):
        raise ServeError(
            ErrorKind.BAD_INPUT, f"REDIS_URI must be a redis:// URL, not {redis_uri or 'unset'!r}"
        )
    return env


def prepare(env: Mapping[str, str]) -> None:
    """The runtime's migrations and Warrant's tables, once, before any replica starts."""
    try:
        from langgraph_runtime_pg.migrate import upgrade_head  # the `[serve]` extra
    except ImportError:
        raise ServeError(
            ErrorKind.BAD_INPUT,
            "the LangGraph server is not installed here: "
            "python3 -m venv .venv-serve && .venv-serve/bin/pip install -e '.[serve]'",
        ) from None
    try:
        with postgres_pool(env["WARRANT_DB"], max_size=1):
            pass
        upgrade_head(env["DATABASE_URI"])
    except StorageUnavailable as exc:
        raise ServeError(ErrorKind.UNREACHABLE, str(exc)) from None
    except Exception as exc:  # alembic's and the drivers' errors, as one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ServeError(
            ErrorKind.UNREACHABLE, f"cannot migrate {redact(env['DATABASE_URI'])}: {first}"
        ) from None


def start(count: int, host: str, port: int, env: Mapping[str, str]) -> list[Replica]:
    """`count` replicas on ports `port`, `port + 1`, …, each answering `/ok` before this returns."""
    ports = [port + number for number in range(count)]
    if taken := [each for each in ports if _taken(host, each)]:
        raise ServeError(
            ErrorKind.UNREACHABLE,
            f"port {taken[0]} on {host} is in use; choose another with --port",
        )
    replicas = [_spawn(number + 1, host, each, env) for number, each in enumerate(ports)]
    try:
        for replica in replicas:
            _wait_ready(replica)
    except (ServeError, KeyboardInterrupt, Stopped):
        stop(replicas)
        raise
    return replicas


class Stopped(Exception):
    """`warrant serve` was asked to stop (SIGTERM, SIGHUP)."""


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP stop the replica set (a `kill` of `warrant serve` left
    its replicas serving on their ports, holding their PostgreSQL connections)."""

    def raise_stopped(signum: int, _frame: object) -> None:
        raise Stopped(signal.Signals(signum).name)

    asked = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGINT too: a shell that started
    # `warrant serve` in the background had it ignored, and the replicas alone would stop on it
    earlier = {sig: signal.signal(sig, raise_stopped) for sig in asked}
    try:
        yield
    finally:
        for sig, handler in earlier.items():
            signal.signal(sig, handler)


def supervise(replicas: list[Replica], report: Callable[[str], None]) -> int:
    """Wait while any replica serves, reporting each one that exits; stop them all on Ctrl-C,
    SIGTERM or SIGHUP (`stopped_by_signals`)."""
    running = list(replicas)
    try:
        while running:
            for replica in [each for each in running if each.process.poll() is not None]:
                running.remove(replica)
                report(
                    f"replica {replica.number} (pid {replica.process.pid}) exited with code {replica.process.returncode}; {len(running)} still serving"
                )
            time.sleep(0.5)
    except (KeyboardInterrupt, Stopped):
        stop(running)
        return 0
    return 1


def stop(replicas: list[Replica]) -> None:
    for replica in replicas:
        replica.process.terminate()
    for replica in replicas:
        try:
            replica.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            replica.process.kill()


def _spawn(number: int, host: str, port: int, env: Mapping[str, str]) -> Replica:
    command = [sys.executable, "-m", "graph.server.replica", "--host", host, "--port", str(port)]
    process = subprocess.Popen(command, env=dict(env), stdin=subprocess.DEVNULL)
    return Replica(number, f"http://{host}:{port}", process)


def answers(url: str) -> bool:
    """`url` answers 200 within 2 s: its server is up and serving."""
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def _wait_ready(replica: Replica) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if replica.process.poll() is not None:
            raise ServeError(
                ErrorKind.UNREACHABLE,
                f"replica {replica.number} exited with code {replica.process.returncode} before it served (its log is above)",
            )
        if answers(f"{replica.url}/ok"):
            return
        time.sleep(0.3)
    raise ServeError(
        ErrorKind.UNREACHABLE,
        f"replica {replica.number} did not answer {replica.url}/ok within {READY_S:.0f} s",
    )


def _taken(host: str, port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((host, port)) == 0
