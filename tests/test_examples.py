"""What the README tells a newcomer to run works as written: each example as its own process, its
output checked against what the run really stored; a script that needs an extra names it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graph.build import compile_graph
from graph.runs.reading import config_of, run_result
from ledger.persistence.savers import open_saver
from tests.helpers import R42_REFS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example(name: str, *args: str, cwd: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.splitlines()


def printed(handover: dict, thread: str) -> list[str]:
    """What examples/embedded.py prints for a handover."""
    refs = ", ".join(item["ref"] for item in handover["evidence"])
    lines = [f"thread: {thread}", f"status: {handover['status']}", f"evidence: {refs}", "unknowns:"]
    return lines + [f"- {line}" for line in handover["unknowns"]]


def test_the_embedded_example_prints_the_handover_its_run_stored(tmp_path):
    db = str(tmp_path / "runs.sqlite")
    shown = example("embedded.py", "--db", db, "--thread", "embedded-1", cwd=tmp_path)
    with open_saver(db) as storage:
        handover = run_result(compile_graph(*storage), config_of("embedded-1")).handover
    assert handover["status"] == "stopped" and handover["pending"] == []
    assert [item["ref"] for item in handover["evidence"]] == R42_REFS
    assert shown == printed(handover, "embedded-1")
    # In memory, the same scripted run, kept nowhere.
    in_memory = example("embedded.py", cwd=tmp_path)
    assert in_memory == printed(handover, "r42-embedded")
    assert [
        path.name for path in tmp_path.iterdir() if not path.name.startswith("runs.sqlite")
    ] == []


WITHOUT_LANGCHAIN = """
import importlib.util, runpy, sys
found = importlib.util.find_spec
importlib.util.find_spec = lambda name, *rest: None if name == "langchain" else found(name, *rest)
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
"""A Python where langchain is not installed, as the bench script looks for it (the bench extra
may be installed here: CI installs it to run the benches)."""


def test_a_bench_script_without_its_extra_names_the_extra_in_one_line(tmp_path):
    bench = EXAMPLES.parent / "bench" / "governed_step.py"
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_LANGCHAIN, str(bench)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert (
        result.stderr
        == "bench/governed_step.py needs the bench extra (langchain): pip install -e '.[bench]'\n"
    )
