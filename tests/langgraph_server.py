"""A real `langgraph dev` for the tests, on a free port, stopped by its process group."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graph.server.serve import answers
from ledger.store import EVENTS, space

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = str(Path(sys.executable).with_name("langgraph"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(
    url: str,
    server: subprocess.Popen,
    timeout: float = 90,
    path: str = "/ok",
    name: str = "langgraph dev",
) -> None:
    """Until `server` answers 200 at `url + path`; it exiting first, or the time running out, is
    an error naming it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"{name} exited with {server.returncode}")
        if answers(f"{url}{path}"):
            return
        time.sleep(0.5)
    raise TimeoutError(f"{name} did not answer at {url}")


def config_in(folder: Path) -> Path:
    """This project's `langgraph.json`, its paths made absolute, written in `folder`: a server
    started there keeps its own runs (`.langgraph_api`), never another test's."""
    config = json.loads((ROOT / "langgraph.json").read_text())

    def rooted(path: str) -> str:
        return str(ROOT / path) if path.startswith(".") else path

    config["dependencies"] = [rooted(path) for path in config["dependencies"]]
    config["graphs"] = {name: rooted(path) for name, path in config["graphs"].items()}
    for part in ("checkpointer", "store", "auth"):
        config[part]["path"] = rooted(config[part]["path"])
    written = folder / "langgraph.json"
    written.write_text(json.dumps(config, indent=2))
    return written


@contextmanager
def langgraph_dev(folder: Path, env: dict[str, str]) -> Iterator[str]:
    """`langgraph dev` serving this project's langgraph.json with `env` added; its log in
    `folder`."""
    port = free_port()
    log = (folder / "langgraph.log").open("w")
    environment = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        **env,
    }
    config = str(config_in(folder))
    server = subprocess.Popen(
        [LANGGRAPH, "dev", "--no-browser", "--no-reload", "--port", str(port), "--config", config],
        cwd=folder,  # the dev server keeps its runs in `.langgraph_api` here: none leaks to the next
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, server)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def served_values(client: Any, thread_id: str) -> dict[str, Any]:
    """A served thread's state values with its ledger read back from the server's store (through
    the SDK, up to the run's cursor), as `warrant events` reads it from a database."""
    values = client.threads.get_state(thread_id)["values"]
    count = (values.get("cursor") or {}).get("events", 0)
    found: list[dict[str, Any]] = []
    while page := client.store.search_items(space(thread_id, EVENTS), limit=100, offset=len(found))[
        "items"
    ]:
        found += page
    ledger = sorted(
        (item for item in found if int(item["key"]) <= count), key=lambda item: item["key"]
    )
    return {**values, "events": [item["value"] for item in ledger]}


@contextmanager
def paused_dev(folder: Path, point: str, env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    """`langgraph_dev` whose runs pause at `point` (`graph/crashpoints.py`): its URL and the file
    a paused run writes (`release` lets it go on)."""
    signal_file = folder / "pause"
    paused = {"WARRANT_PAUSE_AT": point, "WARRANT_PAUSE_FILE": str(signal_file)}
    with langgraph_dev(folder, {**env, **paused}) as url:
        yield url, signal_file


def run_until_paused(client: Any, signal_file: Path, scenario: str = "R42") -> tuple[str, str]:
    """A new thread's run of `scenario`, once it has paused: its thread and run ids."""
    for stale in (signal_file, signal_file.with_name("pause.release")):
        stale.unlink(missing_ok=True)
    thread = client.threads.create()["thread_id"]
    run = client.runs.create(thread, "triage", input={"scenario": scenario})
    deadline = time.monotonic() + 60
    while not signal_file.exists():
        assert time.monotonic() < deadline, "the run never reached its pause point"
        time.sleep(0.05)
    return thread, run["run_id"]


def release(signal_file: Path) -> None:
    signal_file.with_name("pause.release").touch()


def handover_of(client: Any, thread: str, timeout: float = 90) -> dict[str, Any]:
    """The thread's values with its ledger (`served_values`) once its run has ended idle."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        values = client.threads.get_state(thread)["values"]
        if "handover" in values and client.threads.get(thread)["status"] == "idle":
            return served_values(client, thread)
        time.sleep(0.2)
    raise AssertionError("no handover")
