"""A real `warrant inbox --serve` for the web inbox's tests: started as the installed command, its
printed opening URL read back, stopped by its process group."""

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
