"""The tools' worker processes: one forkserver, started once, with every module a worker runs
already imported, so that a worker starts by a fork of a warm process.

A process has one forkserver, and its preload is fixed when it starts: each tool that starts
workers takes its context from here, so whichever starts first, the server holds them all
(`tools.logs.familyscan` for the family scans' pool, `tools.analysis.worker` for `analyze`'s
process of each call). Forkserver, not fork: the caller may hold threads (a server).
"""

from __future__ import annotations

import multiprocessing
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.context import ForkServerContext

PRELOAD = ("tools.logs.familyscan", "tools.analysis.worker", "duckdb", "numpy")
"""`duckdb` and `numpy` by name: the modules load them where a query runs or a span is counted, so
that the caller's process never pays for them, while the forkserver still forks workers with them
loaded."""


def forkserver() -> ForkServerContext:
    """The forkserver context, its preload the workers' modules."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


@contextmanager
def without_main() -> Iterator[None]:
    """While workers start, `__main__` is a blank module. multiprocessing starts a worker by
    importing its parent's main module: the `warrant` script (the whole command line, 1.1-1.5 s
    a worker), a notebook or `python -` (which cannot be imported), or an embedding program
    without an `if __name__ == "__main__"` guard (which would run again in every worker). A
    worker needs none of it: what it runs is one of `PRELOAD`."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main
