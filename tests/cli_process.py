"""Running the `warrant` command: in this process (as the console script's `main`, the default),
or as the installed command in a subprocess (smoke tests, and paused and killed runs)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph.build import compile_graph
from graph.cli.main import main
from graph.runs.ledger import ledger_break
from ledger.persistence.savers import open_saver
from tests.helpers import recorded
from tests.in_process import as_process, exit_code

WARRANT = str(Path(sys.executable).with_name("warrant"))


def warrant(
    *args: str, cwd: Path, env: dict[str, str] | None = None, subprocess_: bool = False
) -> subprocess.CompletedProcess[str]:
    """`warrant ARGS` in `cwd` with `env` added (and no `WARRANT_DB` unless given): its exit code,
    stdout and stderr. In this process unless `subprocess_`: the same `main` the console script
    runs, without a Python start and imports per command."""
    if not subprocess_:
        return _in_process(list(args), cwd, {"WARRANT_DB": "", **(env or {})})
    return subprocess.run(
        [WARRANT, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "WARRANT_DB": "", **(env or {})},
    )


def run_chooser(
    scenario: str, chooser: str, *extra: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`warrant run SCENARIO --chooser CHOOSER EXTRA… --db memory`: the command line the chooser
    tests vary only in their scenario, chooser, extra options and environment."""
    return warrant(
        "run", scenario, "--chooser", chooser, *extra, "--db", "memory", cwd=cwd, env=env
    )


def run_thread(
    scenario: str, chooser: str, db: str, thread: str, *extra: str, cwd: Path, exit_code: int
) -> subprocess.CompletedProcess[str]:
    """`warrant run SCENARIO --chooser CHOOSER --db DB --thread THREAD -q EXTRA…`, once it has
    exited with `exit_code`: a run the test goes on to answer, show or continue by its thread."""
    ran = warrant(
        "run", scenario, "--chooser", chooser, "--db", db, "--thread", thread, "-q", *extra, cwd=cwd
    )
    assert ran.returncode == exit_code, ran.stderr
    return ran


def _in_process(
    args: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    with (
        as_process([WARRANT, *args], cwd, env),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = exit_code(main)
    return subprocess.CompletedProcess([WARRANT, *args], code, out.getvalue(), err.getvalue())


def run_json(
    *args: str, cwd: Path, env: dict[str, str] | None = None, exit_code: int = 0
) -> dict[str, Any]:
    """`warrant ARGS --json --quiet`'s handover, once the command has exited with `exit_code`."""
    result = warrant(*args, "--json", "--quiet", cwd=cwd, env=env)
    assert result.returncode == exit_code, result.stderr
    return json.loads(result.stdout)


@dataclass
class Paused:
    """A `warrant` process stopped at a pause point (see graph/crashpoints.py)."""

    process: subprocess.Popen[str]
    signal_file: Path

    def wait_paused(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not self.signal_file.exists():
            if self.process.poll() is not None:
                raise AssertionError(
                    f"exited {self.process.returncode} before pausing: {self.process.stderr.read()}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(f"no pause at {self.signal_file}")
            time.sleep(0.05)

    def kill(self) -> None:
        """kill -9, the whole process group."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def release(self) -> subprocess.CompletedProcess[str]:
        self.signal_file.with_name(self.signal_file.name + ".release").touch()
        stdout, stderr = self.process.communicate(timeout=180)
        return subprocess.CompletedProcess(
            self.process.args, self.process.returncode, stdout, stderr
        )


def start_paused(*args: str, point: str, cwd: Path, env: dict[str, str] | None = None) -> Paused:
    signal_file = cwd / f"pause-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "WARRANT_DB": "",
        **(env or {}),
        "WARRANT_PAUSE_AT": point,
        "WARRANT_PAUSE_FILE": str(signal_file),
    }
    process = subprocess.Popen(
        [WARRANT, *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    return Paused(process, signal_file)


def without_thread(handover: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in handover.items() if key != "thread_id"}


def ledger(thread: str, db: str) -> list[dict[str, Any]]:
    """A run's ledger as stored (read in-process; `warrant events` itself is tested in test_cli)."""
    with open_saver(db) as storage:
        return recorded(compile_graph(*storage), {"configurable": {"thread_id": thread}})["events"]


def assert_exactly_once(events: list[dict[str, Any]], calls: Iterable[str]) -> None:
    """Seq numbers contiguous; each call executed once; each turn proposed once."""
    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    executed = Counter(
        event["payload"]["call_id"] for event in events if event["type"] == "executed"
    )
    assert executed == Counter(dict.fromkeys(calls, 1))
    proposed = Counter(event["turn"] for event in events if event["type"] == "proposed")
    assert set(proposed.values()) == {1}


def without_reruns(handover: dict[str, Any]) -> dict[str, Any]:
    """The handover with what says that a call ran again after a crash taken out, once checked:
    such a receipt is attempt 2 or more, and the unknowns say so once (a read cut after its tool
    ran and before its receipt was saved runs again; the earlier attempt may have run)."""
    for item in handover["evidence"]:
        attempt = item.pop("attempt", 1)
        if attempt > 1:
            said = [
                line
                for line in handover["unknowns"]
                if line.startswith(f"{item['ref']}: the call ran {attempt} times")
            ]
            assert len(said) == 1, handover["unknowns"]
            handover["unknowns"].remove(said[0])
    return handover


def assert_resumed_as_uncut(
    resumed: dict[str, Any], baseline: dict[str, Any], thread: str, db: str, calls: Iterable[str]
) -> None:
    """A cut and resumed run hands over what the uncut `baseline` did (its reruns aside), and its
    ledger ran each of `calls` exactly once."""
    assert without_thread(without_reruns(resumed)) == without_thread(baseline), thread
    assert_exactly_once(ledger(thread, db), calls)


def record_break(thread: str, db: str) -> str | None:
    """What `warrant events THREAD --verify` finds (None: the ledger and receipts hold)."""
    with open_saver(db) as storage:
        return ledger_break(
            thread, recorded(compile_graph(*storage), {"configurable": {"thread_id": thread}})
        )
