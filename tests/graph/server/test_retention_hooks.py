"""`langgraph dev` finds the retention hooks it asks a custom checkpointer for (`aprune`,
`adelete_for_runs`) on Warrant's, on the command line's SQLite store and on PostgreSQL: no warning
at start that they are missing (ledger/persistence/pruning.py; tested in
tests/ledger/persistence/test_pruning.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.langgraph_server import langgraph_dev

pytestmark = pytest.mark.slow  # a real `langgraph dev`

MISSING = ("missing adelete_for_runs", "missing aprune")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def start_log(folder: Path, db: str) -> str:
    """The server's log from its start up to its naming the checkpointer it uses."""
    with langgraph_dev(folder, {"WARRANT_DB": db}):
        deadline = time.monotonic() + 30
        while "Using custom checkpointer" not in (log := (folder / "langgraph.log").read_text()):
            assert time.monotonic() < deadline, f"the server never named its checkpointer:\n{log}"
            time.sleep(0.2)
    return ANSI.sub("", (folder / "langgraph.log").read_text())


@pytest.mark.parametrize(
    ("backend", "saver"),
    [("sqlite", "PrunableAsyncSqliteSaver"), ("postgres", "WarrantPostgresSaver")],
)
def test_langgraph_dev_does_not_warn_of_missing_retention_hooks(request, tmp_path, backend, saver):
    db = (
        str(request.getfixturevalue("postgres_url"))
        if backend == "postgres"
        else str(tmp_path / "runs" / "warrant.sqlite")
    )
    log = start_log(tmp_path, db)
    assert [line for line in log.splitlines() if any(m in line for m in MISSING)] == []
    assert f"Using custom checkpointer: {saver}" in log  # the log this test read is the right one
