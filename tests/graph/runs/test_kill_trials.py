"""Random-point kill trials: a run killed anywhere (not only at node boundaries) always finishes.

Each trial forks a worker that runs R42 and is killed with SIGKILL, either as it reports a ledger
line chosen at random or after a random delay (inside a node, a checkpoint write or a tool read);
then `resume` must finish the thread with the same handover as an uninterrupted run and every
call executed exactly once. Trials are forked from this process (no interpreter start-up), so a
hundred of them take seconds.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from typing import Any

import pytest

from graph.runs.reading import RunError
from graph.runs.requests import RunRequest, admit_request
from graph.runs.runner import resume, start
from tests.cli_process import (
    assert_exactly_once,
    ledger,
    record_break,
    without_reruns,
    without_thread,
)
from tests.helpers import R42_CALLS

pytestmark = pytest.mark.slow  # real processes: killed workers, servers

TRIALS = int(os.environ.get("WARRANT_KILL_TRIALS", "100"))
FORK = multiprocessing.get_context("fork")


def request(message_id: str) -> RunRequest:
    return admit_request("R42", None, "scripted", None, message_id)


def run_to_end(db: str, message_id: str) -> dict[str, Any]:
    return start(request(message_id), db, lambda _: None).handover


def killed_at_line(db: str, message_id: str, line: int) -> None:
    """The worker kills itself as it reports ledger line `line`."""
    seen = 0

    def on_event(_: dict[str, Any]) -> None:
        nonlocal seen
        seen += 1
        if seen == line:
            os.kill(os.getpid(), signal.SIGKILL)

    start(request(message_id), db, on_event)


def trial(db: str, message_id: str, rng: random.Random, span: float) -> str:
    """One worker killed at a random point; returns how it was killed."""
    if rng.random() < 0.5:
        line = rng.randint(1, 13)
        worker = FORK.Process(target=killed_at_line, args=(db, message_id, line))
        worker.start()
        worker.join(60)
        return f"at ledger line {line}"
    delay = rng.uniform(0, span)
    worker = FORK.Process(target=run_to_end, args=(db, message_id))
    worker.start()
    time.sleep(delay)
    if worker.is_alive():
        os.kill(worker.pid, signal.SIGKILL)
    worker.join(60)
    return f"after {delay * 1000:.1f} ms"


def trials(db: str) -> None:
    began = time.monotonic()
    baseline = without_thread(run_to_end(db, "baseline"))
    span = 1.5 * (time.monotonic() - began)
    rng = random.Random(int(os.environ.get("WARRANT_KILL_SEED", "20261202")))
    for number in range(TRIALS):
        message_id = f"trial-{number}"
        thread = request(message_id).thread_id
        how = trial(db, message_id, rng, span)
        if number % 2 and ledger_exists(db, thread):  # `warrant resume THREAD`
            finished = resume(thread, db, lambda _: None)
        else:  # the same command again, with the same --message-id
            finished = start(request(message_id), db, lambda _: None)
        assert not finished.pending, how
        assert without_thread(without_reruns(finished.handover)) == baseline, how
        assert_exactly_once(ledger(thread, db), R42_CALLS)
        assert record_break(thread, db) is None, how
        again = resume(thread, db, lambda _: None)  # a finished run stays as it is
        assert without_thread(without_reruns(again.handover)) == baseline, how


def ledger_exists(db: str, thread: str) -> bool:
    try:
        return bool(ledger(thread, db))
    except (KeyError, RunError):
        return False


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_runs_killed_at_random_points_all_finish_with_the_same_handover(backend, tmp_path, request):
    db = (
        str(tmp_path / "kills.sqlite")
        if backend == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    trials(db)
