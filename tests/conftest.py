"""Shared fixtures: the R42 scenario, throwaway scenarios, action files."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from hypothesis import HealthCheck, settings

from lab import LAB_DIR
from lab.rtlgen import ensure_repository
from scenario.registry import Scenario, load_scenario
from tests.langgraph_server import langgraph_dev

# Model routes run only when an evaluation report admits them (`guards/route_admission.py`); the
# suite's routes are fake servers and the local model it measures, so every run of the suite (and
# every process it starts) runs them under a recorded override. The admission tests unset it.
os.environ.setdefault("WARRANT_ROUTE_OVERRIDE", "the test suite: fake and local routes under test")

# Property tests draw the same examples on every run (a red suite is reproducible, CI never goes
# red on a draw nobody can repeat); `pytest --hypothesis-profile=explore` draws fresh ones.
settings.register_profile(
    "derandomized",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, max_examples=500, print_blob=True)
settings.load_profile("derandomized")

# The lab's design repository is built, never committed (lab/rtlgen.py): admission builds it for
# a run, and tests that read the lab's manifests directly find it built here.
ensure_repository()


@pytest.fixture(autouse=True)
def user_store_of_its_own(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test has its own user store (`$XDG_DATA_HOME/warrant/`, the default outside a
    project): a `warrant` run without --db neither reads nor writes the user's runs or another
    test's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg")))


THREADS_END_S = 2.0
"""How long the threads a fast test started are given, together, to end after it."""


@pytest.fixture(autouse=True)
def threads_end_with_their_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A fast test ends the threads it starts: none that is not a daemon, nor any of Warrant's own
    (`warrant-*`: a model attempt given up at its deadline, a hook past its time, a read-ahead),
    is alive after a bounded join. A thread left running is a test that leaks into the next one's
    time and state. Tests marked `slow` or `live` (real processes, servers) are not checked."""
    if request.node.get_closest_marker("slow") or request.node.get_closest_marker("live"):
        yield
        return
    before = set(threading.enumerate())
    yield
    ends = time.monotonic() + THREADS_END_S
    left = []
    for thread in threading.enumerate():
        if thread in before or (thread.daemon and not thread.name.startswith("warrant-")):
            continue
        thread.join(max(0.0, ends - time.monotonic()))
        if thread.is_alive():
            left.append(f"{thread.name} (daemon={thread.daemon})")
    assert not left, f"threads still running {THREADS_END_S:g} s after the test: {', '.join(left)}"


@pytest.fixture(scope="session")
def r42() -> Scenario:
    return load_scenario(LAB_DIR / "R42.toml")


@pytest.fixture(scope="session")
def sta1() -> Scenario:
    return load_scenario(LAB_DIR / "STA1.toml")


@pytest.fixture
def action_file(tmp_path: Path) -> Callable[[Iterable[Any]], str]:
    """Write documents (dicts become JSON, strings are written as they are) to a JSONL file."""

    def write(documents: Iterable[Any]) -> str:
        path = tmp_path / "actions.jsonl"
        lines = [doc if isinstance(doc, str) else json.dumps(doc) for doc in documents]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return f"file:{path}"

    return write


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    """A small user scenario (not the lab): one log, one spec, one history, and a secret outside."""
    root = tmp_path / "scenario"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "t.log").write_text(
        "UVM_INFO a.sv(1) @ 10: env [X] start\nUVM_ERROR b.sv(2) @ 20: env.chk [FIFO] overflow\n"
    )
    (root / "spec.md").write_text(
        "# Spec\n\n## fifo_depth\nThe FIFO holds 16 entries.\n\n## other\nx\n"
    )
    (root / "hist.csv").write_text(
        "run,date,test,status\nA1,2026-01-01,fifo_smoke,PASS\nA2,2026-01-02,fifo_smoke,FAIL\n"
    )
    (tmp_path / "secret.txt").write_text("never readable\n")
    return root


POSTGRES_ADMIN = os.environ.get(
    "WARRANT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new database on the real server (default 127.0.0.1:5432), dropped afterwards.

    Without a server the test skips with the reason, except under CI (`CI=true`), where a missing
    server fails the suite instead.
    """
    name = f"warrant_test_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True, connect_timeout=5) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        reason = (
            f"PostgreSQL is not reachable at {POSTGRES_ADMIN} ({str(exc).strip().splitlines()[0]})"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI requires it")
        pytest.skip(f"{reason}; start it or set WARRANT_TEST_POSTGRES")
    try:
        yield urlunsplit(urlsplit(POSTGRES_ADMIN)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="module")
def module_postgres_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="module")
def server_url(tmp_path_factory, module_postgres_url) -> Iterator[str]:
    """A real `langgraph dev` storing runs in its own PostgreSQL database (the `checkpointer`
    entry of langgraph.json)."""
    env = {
        "WARRANT_DB": module_postgres_url,
        "WARRANT_CHOOSER_DIR": str(tmp_path_factory.getbasetemp()),  # the tests' action files
        "WARRANT_SCENARIO_ROOTS": str(tmp_path_factory.getbasetemp() / "served"),
    }
    with langgraph_dev(tmp_path_factory.mktemp("server"), env) as url:
        yield url
