"""A real `warrant web` (or `warrant inbox --serve`, its operator alone) for the web app's tests:
started as the installed command, its printed opening URLs read back, stopped by its process
group."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.cli_process import WARRANT
from tests.langgraph_server import wait_until_up

OPENING = re.compile(r"open (http://127\.0\.0\.1:(\d+))/\?key=(\S+) ")
PERSON = re.compile(r"(?:replies signed|reader) (\S+): open (http://127\.0\.0\.1:\d+/\?key=\S+) ")


@dataclass(frozen=True)
class Served:
    """A serving inbox: its address, its port, and the URL with the key that opens a session."""

    url: str
    port: int
    opening: str


@contextmanager
def served_inbox(db: str, *options: str) -> Iterator[Served]:
    """`warrant inbox --serve --db DB OPTIONS` until the block ends."""
    server = subprocess.Popen(
        [WARRANT, "inbox", "--serve", "--db", db, *options],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = first_line(server, timeout=90)
        found = OPENING.search(line)
        assert found, f"no opening URL in {line!r}"
        served = Served(found[1], int(found[2]), f"{found[1]}/?key={found[3]}")
        wait_until_up(served.url, server, name="warrant inbox --serve")
        yield served
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
        server.stdout.close()  # type: ignore[union-attr]


def first_line(server: subprocess.Popen[str], timeout: float) -> str:
    """The server's first line of output, waited for at most `timeout` s (empty: it exited)."""
    lines: queue.Queue[str] = queue.Queue()
    assert server.stdout is not None
    threading.Thread(target=lambda: lines.put(server.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    return lines.get(timeout=timeout)


@dataclass(frozen=True)
class ServedWeb:
    """A serving web app: its address, port, process, and each person's opening URL."""

    url: str
    port: int
    process: subprocess.Popen[str]
    openings: dict[str, str]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_web(db: str, *options: str, env: dict[str, str] | None = None) -> ServedWeb:
    """`warrant web --db DB OPTIONS`, running once every person's URL is printed and it answers."""
    readers = sum(1 for option in options if option == "--reader")
    server = subprocess.Popen(
        [WARRANT, "web", "--db", db, *options],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    openings: dict[str, str] = {}
    try:
        for _ in range(1 + readers):
            line = first_line(server, timeout=90)
            found = PERSON.search(line)
            assert found, f"no opening URL in {line!r}"
            openings[found[1]] = found[2]
        port = int(next(iter(openings.values())).split(":")[2].split("/")[0])
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, server, name="warrant web")
    except BaseException:
        os.killpg(server.pid, signal.SIGTERM)
        raise
    return ServedWeb(url, port, server, openings)


@contextmanager
def served_web(db: str, *options: str, env: dict[str, str] | None = None) -> Iterator[ServedWeb]:
    served = start_web(db, *options, env=env)
    try:
        yield served
    finally:
        served.stop()
