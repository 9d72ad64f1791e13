"""The analysis sandbox: a process of its own for each query, holding only the tables it was given.

Tables come from the private files `tools/analysis/tables.py` wrote. The query runs in a fork of
the tools' forkserver (`tools/analysis/worker.py`): a connection whose temp directory is a
private folder of the call, external access turned off and its configuration locked once the
tables are loaded, one thread, DuckDB's memory limit for its buffers and an address-space limit
for the whole process. The process is killed at the call's time limit; one that ends without an
answer (killed at its limit) fails the call with a clear error, and the run goes on. At most
`MAX_ROWS` rows of the result are kept.
"""

from __future__ import annotations

import signal
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from contract.codes import RefusalCode
from contract.errors import RecordRefusal
from scenario.reading import check_time, deadline
from tools.analysis.worker import (
    ADDRESS_SPACE,
    MAX_ROWS,
    MEMORY_LIMIT,
    Answer,
    Cell,
    Job,
    TableFile,
    serve,
)
from tools.workers import forkserver, without_main

__all__ = ["MAX_ROWS", "MEMORY_LIMIT", "Cell", "Result", "run_query"]


@dataclass(frozen=True)
class Result:
    """What a query computed: its columns, its first `MAX_ROWS` rows, and how many there were."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    total: int


def run_query(query: str, tables: Sequence[TableFile], seconds: float | None = None) -> Result:
    """`query` over `tables`, in the sandbox's process; a `RecordRefusal` when the sandbox
    refuses it, it fails, passes its memory limits or is cut by the time limit (the sooner of
    `seconds` and the reading session's deadline)."""
    with tempfile.TemporaryDirectory(prefix="warrant-spill-") as spill:
        job = Job(query, tuple(tables), spill)
        answer = _answer(job, _time_left(seconds), seconds)
    if answer.refused is not None:
        raise RecordRefusal(RefusalCode.INVALID_ARGUMENT, answer.refused)
    return Result(answer.columns, answer.rows, answer.total)


def _time_left(seconds: float | None) -> float | None:
    until = deadline()
    left = None if until is None else max(0.0, until - time.monotonic())
    limits = [value for value in (seconds, left) if value is not None]
    return min(limits) if limits else None


def _answer(job: Job, timeout: float | None, seconds: float | None) -> Answer:
    """`job` run by a process of its own, waited for at most `timeout` seconds and killed then."""
    context = forkserver()
    answers, channel = context.Pipe(duplex=False)
    process = context.Process(target=serve, args=(channel, job), name="warrant-analysis")
    try:
        with without_main():
            process.start()
        channel.close()
        if not answers.poll(timeout):
            process.kill()
            check_time()  # the reading session's own cut: its time limit or the run's deadline
            raise _cut(seconds)
        try:
            answer: Answer = answers.recv()
        except EOFError:
            process.join()
            raise _ended(process.exitcode) from None
        return answer
    finally:
        if process.pid is not None:
            if process.is_alive():
                process.kill()
            process.join()
        channel.close()
        answers.close()


def _cut(seconds: float | None) -> RecordRefusal:
    shown = f" ({seconds:g}s)" if seconds is not None else ""
    return RecordRefusal(RefusalCode.TOOL_TIMEOUT, f"the query ran past its time limit{shown}")


def _ended(code: int | None) -> RecordRefusal:
    """The query's process ended without an answer: killed at its memory limit, most often."""
    how = f"exited ({code})"
    if code is not None and code < 0:
        how = f"was ended by {_signal_name(-code)}"
    return RecordRefusal(
        RefusalCode.INVALID_ARGUMENT,
        f"the query's process {how} before it answered: the sandbox's memory limit is"
        f" {MEMORY_LIMIT} of DuckDB buffers and {ADDRESS_SPACE >> 20} MiB of address space",
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
