"""Scale-out: `warrant serve` replicas of the LangGraph server on one PostgreSQL and one Redis
(each test its own database and Redis db), driven by `langgraph_sdk`; one replica killed with runs
in flight, at a pause point and at a random moment; a question raised on one replica answered
through the other. The server runs from the `[serve]` extra's own environment (`.venv-serve`, or
`WARRANT_SERVE_PYTHON`)."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from langgraph_sdk import get_sync_client

from contract.codes import EventKind, Status
from tests.cli_process import warrant
from tests.conftest import fresh_database
from tests.helpers import R42_CALLS, R42_REFS
from tests.langgraph_server import free_port, served_values

pytestmark = pytest.mark.slow  # real processes: replicas started and killed

ROOT = Path(__file__).resolve().parents[3]
SERVE_PYTHON = Path(os.environ.get("WARRANT_SERVE_PYTHON", ROOT / ".venv-serve" / "bin" / "python"))
RUNS = 20
RECLAIM_S = 60
"""How long the killed replica's runs may take to finish elsewhere (20 s measured): three heartbeats
of 5 s, then the run itself, on two busy cores."""
KILL_AFTER_S = 0.7
"""When the replica is killed in the second case: runs started, none of them finished (a fixed
moment, so that a failure can be repeated; the pause point case holds runs at a known step)."""
_REDIS_DBS = itertools.count(8)


@dataclass(frozen=True)
class Shared:
    database: str
    redis: str
    folder: Path


@dataclass(frozen=True)
class Replica:
    url: str
    pid: int
    """The replica's own process (its `warrant serve` supervisor is its parent)."""
    log: Path


@pytest.fixture
def shared(tmp_path) -> Iterator[Shared]:
    if not SERVE_PYTHON.exists():
        pytest.fail(
            f"the server's environment is missing ({SERVE_PYTHON}): "
            "python3 -m venv .venv-serve && .venv-serve/bin/pip install -e '.[serve]'"
        )
    redis_db = next(_REDIS_DBS)
    _flush(redis_db)
    with fresh_database() as database:
        yield Shared(database, f"redis://127.0.0.1:6379/{redis_db}", tmp_path)
    _flush(redis_db)


def _flush(redis_db: int) -> None:
    subprocess.run(["redis-cli", "-n", str(redis_db), "flushdb"], check=True, capture_output=True)


@contextmanager
def serving(shared: Shared, name: str, **env: str) -> Iterator[Replica]:
    """`warrant serve --replicas 1` on a free port, from the server's environment."""
    log = shared.folder / f"{name}.log"
    environment = {key: value for key, value in os.environ.items() if key != "WARRANT_DB"}
    environment |= {
        "DATABASE_URI": shared.database,
        "REDIS_URI": shared.redis,
        "WARRANT_CHOOSER_DIR": str(shared.folder),
        **env,
    }
    command = [str(SERVE_PYTHON.with_name("warrant")), "serve", "--port", str(free_port())]
    with log.open("w") as errors:
        supervisor = subprocess.Popen(
            command,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            start_new_session=True,
        )
    try:
        assert supervisor.stdout is not None
        first = supervisor.stdout.readline().split()  # replica 1  http://…  pid N
        assert first[:2] == ["replica", "1"], f"{first}: {log.read_text()[-2000:]}"
        yield Replica(first[2], int(first[4]), log)
    finally:
        os.killpg(supervisor.pid, signal.SIGTERM)
        supervisor.wait(timeout=30)


def start_runs(clients: list[Any], chooser: str | None = None) -> list[tuple[str, str]]:
    started = []
    for number in range(RUNS):
        client = clients[number % len(clients)]
        thread = client.threads.create()
        given = {"scenario": "R42", **({"chooser": chooser} if chooser else {})}
        run = client.runs.create(thread["thread_id"], "triage", input=given)
        started.append((thread["thread_id"], run["run_id"]))
    return started


def unfinished(client: Any, runs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(t, r) for t, r in runs if client.runs.get(t, r)["status"] in ("pending", "running")]


def wait_all(client: Any, runs: list[tuple[str, str]], within: float) -> None:
    deadline = time.monotonic() + within
    waiting = unfinished(client, runs)
    while waiting and time.monotonic() < deadline:
        time.sleep(0.5)
        waiting = unfinished(client, waiting)
    assert not waiting, f"{len(waiting)} run(s) still unfinished after {within} s"


def check_each_thread(client: Any, runs: list[tuple[str, str]], shared: Shared) -> None:
    """Every thread ends with its handover, one `executed` event per call, a deadline it was
    given at admission (a crash does not buy time), a ledger `events --verify` accepts."""
    for thread_id, _ in runs:
        values = served_values(client, thread_id)
        handover = values["handover"]
        assert handover["status"] == Status.STOPPED, (thread_id, handover["status"])
        assert [item["ref"] for item in handover["evidence"]] == R42_REFS
        executed = Counter(
            e["payload"]["call_id"] for e in values["events"] if e["type"] == EventKind.EXECUTED
        )
        assert sorted(executed) == sorted(R42_CALLS) and set(executed.values()) == {1}
        assert [e["seq"] for e in values["events"]] == list(range(1, len(values["events"]) + 1))
        assert values["deadline_at"] - values["admitted_at"] == 120  # R42's deadline_s
        verified = warrant(
            "events", thread_id, "--verify", "--db", shared.database, cwd=shared.folder
        )
        assert verified.returncode == 0, verified.stderr


@pytest.mark.parametrize("when", ["at a pause point", "while runs are under way"])
def test_twenty_runs_on_two_replicas_finish_when_one_replica_is_killed(shared, when):
    pause = shared.folder / "paused"
    at_boundary = {"WARRANT_PAUSE_AT": "after:execute@c2", "WARRANT_PAUSE_FILE": str(pause)}
    with (
        serving(shared, "a", **(at_boundary if when == "at a pause point" else {})) as a,
        serving(shared, "b") as b,
    ):
        clients = [get_sync_client(url=a.url), get_sync_client(url=b.url)]
        runs = start_runs(clients)
        if when == "at a pause point":
            _wait_for(pause.exists, 60, f"no run reached the pause point on A: {a.log}")
        else:
            time.sleep(KILL_AFTER_S)
        killed_at = time.monotonic()
        os.kill(a.pid, signal.SIGKILL)
        in_flight = unfinished(clients[1], runs)
        wait_all(clients[1], runs, RECLAIM_S)
        finished_s = time.monotonic() - killed_at
        check_each_thread(clients[1], runs, shared)
    if when == "at a pause point":  # A's runs held there were taken over by B
        assert in_flight, "no run was in flight when A was killed"
    print(
        f"killed {when}: {len(in_flight)} run(s) in flight, all finished {finished_s:.1f} s later"
    )


def test_a_question_raised_on_one_replica_is_answered_through_the_other(shared):
    chooser = shared.folder / "ask.jsonl"
    chooser.write_text(
        '{"summary": "q", "message": {"kind": "ask_user", "question": "Which seed failed first?"}}\n'
        '{"summary": "s", "message": {"kind": "stop", "text": "ok", "hypotheses": '
        '[{"statement": "per the tester", "refs": ["H1"]}]}}\n'
    )
    with serving(shared, "a") as a, serving(shared, "b") as b:
        asking, answering = get_sync_client(url=a.url), get_sync_client(url=b.url)
        thread = asking.threads.create()
        asking.runs.wait(
            thread["thread_id"], "triage", input={"scenario": "R42", "chooser": f"file:{chooser}"}
        )
        [pending] = answering.threads.get_state(thread["thread_id"])["interrupts"]
        reply = {"interaction_id": pending["value"]["interaction_id"], "answer": "seed 7"}
        answering.runs.wait(
            thread["thread_id"], "triage", command={"resume": {pending["id"]: reply}}
        )
        handover = answering.threads.get_state(thread["thread_id"])["values"]["handover"]
    assert handover["status"] == Status.STOPPED and handover["evidence"][0]["ref"] == "H1"
    assert handover["hypotheses"] == [{"statement": "per the tester", "refs": ["H1"]}]


def test_a_shared_runtime_refuses_to_keep_runs_in_a_local_file(shared):
    environment = {key: value for key, value in os.environ.items() if key != "WARRANT_DB"}
    environment |= {"DATABASE_URI": "sqlite:///runs.sqlite", "REDIS_URI": shared.redis}
    command = [str(SERVE_PYTHON.with_name("warrant")), "serve", "--port", str(free_port())]
    result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: the 'pg' runtime shares runs between replicas: WARRANT_DB (or DATABASE_URI) must "
        "be a postgresql:// URL, not 'sqlite:///runs.sqlite'"
    ]


def test_sigterm_stops_every_replica_and_frees_their_ports_and_connections(shared):
    """`kill` of `warrant serve` (SIGTERM, as a service manager sends) stops its replicas as
    Ctrl-C does: before, both went on serving on their ports with their PostgreSQL sessions. (While
    they serve: neither answers the server's own `/mcp`.)"""
    environment = {key: value for key, value in os.environ.items() if key != "WARRANT_DB"}
    environment |= {"DATABASE_URI": shared.database, "REDIS_URI": shared.redis}
    port = free_port()
    command = [str(SERVE_PYTHON.with_name("warrant")), "serve", "--replicas", "2"]
    supervisor = subprocess.Popen(
        [*command, "--port", str(port)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert supervisor.stdout is not None
    lines = [supervisor.stdout.readline().split() for _ in range(2)]  # replica N  URL  pid P
    assert [line[:2] for line in lines] == [["replica", "1"], ["replica", "2"]], lines
    pids = [int(line[4]) for line in lines]
    assert _sessions(shared.database) > 0
    for line in lines:  # the server's own MCP endpoint is off here too (`served_config`)
        probe = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        assert httpx.post(f"{line[2]}/mcp", json=probe, timeout=30).status_code == 404
    supervisor.send_signal(signal.SIGTERM)  # the supervisor alone, not its process group
    assert supervisor.wait(timeout=40) == 0
    for pid in pids:
        _wait_for(lambda pid=pid: not _alive(pid), 10, f"replica pid {pid} still running")
    for each in (port, port + 1):
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", each)) != 0, f"port {each} still served"
    _wait_for(lambda: _sessions(shared.database) == 0, 10, "replica sessions still open")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"  # a zombie has stopped


def _sessions(database: str) -> int:
    name = database.rsplit("/", 1)[1]
    with psycopg.connect(database) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _wait_for(condition: Any, within: float, why: str) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, why
        time.sleep(0.1)
