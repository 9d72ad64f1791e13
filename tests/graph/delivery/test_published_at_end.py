"""A run's artifacts are published by the door that sees it end (`warrant run`, `resume`,
`continue`), through the `on_end` it hands the run library: `start` alone publishes nothing."""

import getpass
from pathlib import Path

from graph.build import store_of
from graph.delivery.artifacts import deliver, published
from graph.runs.reading import reading_graph
from graph.runs.requests import admit_request
from graph.runs.runner import start
from tests.cli_process import warrant

ROOT = Path(__file__).resolve().parents[3]


def revision_of(db: str, thread: str) -> tuple[str, int] | None:
    """The stored revision's owner and number, read without publishing anything."""
    with reading_graph(db) as graph:
        index = published(store_of(graph), thread)
    return None if index is None else (index.owner, index.revision)


def test_each_command_that_sees_a_run_end_publishes_it(tmp_path):
    db = str(tmp_path / "w.sqlite")
    me = getpass.getuser()
    assert warrant("run", "R42", "--thread", "A", "--db", db, "-q", cwd=ROOT).returncode == 0
    assert revision_of(db, "A") == (me, 1)
    continued = warrant("continue", "A", "--thread", "C", "--db", db, "-q", cwd=ROOT)
    assert continued.returncode == 0, continued.stderr
    assert revision_of(db, "C") == (me, 2)  # the next revision of A's report
    parked = warrant("run", "R42-gated", "--thread", "G", "--db", db, "-q", cwd=ROOT)
    assert parked.returncode == 3 and revision_of(db, "G") is None
    approved = warrant("resume", "G", "--approve", "--db", db, "-q", cwd=ROOT)
    assert approved.returncode == 0, approved.stderr
    assert revision_of(db, "G") == (me, 1)


def test_the_run_library_publishes_only_through_the_on_end_it_is_given(tmp_path):
    db = str(tmp_path / "w.sqlite")
    alone = start(admit_request("R42", None, "scripted", "alone", None), db, lambda _: None)
    told = start(
        admit_request("R42", None, "scripted", "told", None), db, lambda _: None, on_end=deliver
    )
    assert "handover" in alone.values and "handover" in told.values
    assert revision_of(db, "alone") is None
    assert revision_of(db, "told") == (getpass.getuser(), 1)
