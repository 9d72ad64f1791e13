"""A command run inside this process as if it were its own: its argv, folder and environment set
for the call and restored after, its exit code what `SystemExit` says (`tests/cli_process.py`,
`tests/console_blocks.py`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def as_process(
    argv: list[str], cwd: Path, environment: Mapping[str, str], *, only: bool = False
) -> Iterator[None]:
    """This process with `argv`, in `cwd`, with `environment` added (`only`: nothing else)."""
    saved_environment, saved_cwd, saved_argv = dict(os.environ), Path.cwd(), sys.argv
    if only:
        os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environment)


def exit_code(target: Callable[[], object]) -> int:
    """The code `target` exits with, as a process's: 0 when it returns."""
    try:
        target()
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    return 0
