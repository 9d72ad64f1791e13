"""`warrant ask` on a user's own folder: a direct answer quotes approved reference material and
opens no run record (the folder's log is a FIFO: opening it would hang or be refused); a research
question starts a governed run whose `admitted` event records Entry's decision; a root that names
nothing usable is one line; a choice outside the roots is refused."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from graph.entry.candidates import EntryError, candidates
from tests.cli_process import warrant
from tests.graph.entry.test_model_entry import MANIFEST as LOG_ONLY
from tests.helpers import call, stop

MANIFEST = (
    LOG_ONLY
    + """\
[[record]]
id = "spec/fifo.md"
kind = "spec"
path = "spec/fifo.md"
"""
)
SPEC = textwrap.dedent("""\
    # FIFO

    ## Overflow
    FIFO-3: an OVERFLOW_ERR is raised when a write arrives while the FIFO is full.
    FIFO-4: the write is dropped; the count does not change.
    """)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "mine"
    (root / "logs").mkdir(parents=True)
    (root / "spec").mkdir()
    (root / "spec" / "fifo.md").write_text(SPEC)
    (root / "scenario.toml").write_text(MANIFEST)
    return root


def answered(folder: Path, tmp_path: Path, question: str) -> dict:
    """`warrant ask QUESTION --in FOLDER --json`'s answer, the command having succeeded."""
    asked = warrant(
        "ask",
        question,
        "--in",
        str(folder),
        "--json",
        "--db",
        str(tmp_path / "w.sqlite"),
        cwd=tmp_path,
    )
    assert asked.returncode == 0, asked.stderr
    return json.loads(asked.stdout)


def test_a_direct_answer_quotes_reference_material_and_reads_no_run_record(folder, tmp_path):
    os.mkfifo(folder / "logs" / "fifo_smoke.log")  # a run record nobody may open here
    shown = answered(folder, tmp_path, "what does OVERFLOW_ERR mean?")
    assert shown["route"] == "direct" and shown["scenario"] is None
    quotes = shown["answer"]["quotes"]
    expected_line = next(n for n, line in enumerate(SPEC.splitlines(), 1) if "OVERFLOW_ERR" in line)
    assert [(q["source"], q["line"]) for q in quotes] == [("spec spec/fifo.md", expected_line)]
    assert all(source.startswith(("skill ", "spec ")) for source in shown["answer"]["read"])
    assert (folder / "logs" / "fifo_smoke.log").is_fifo()
    assert shown["entry"].startswith("ask-") and shown["unknown"] is None


def test_a_question_no_reference_mentions_says_so(folder, tmp_path):
    (folder / "logs" / "fifo_smoke.log").write_text("TEST PASSED\n")
    shown = answered(folder, tmp_path, "define QUUX_FAULT")
    assert shown["answer"]["quotes"] == []
    assert shown["unknown"].startswith("No approved reference material mentions QUUX_FAULT")


def test_a_research_question_runs_governed_and_records_the_decision(folder, tmp_path):
    (folder / "logs" / "fifo_smoke.log").write_text(
        "UVM_ERROR tb/fifo.sv(9) @ 5: fifo [OVF] OVERFLOW_ERR\nTEST FAILED\n"
    )
    db = str(tmp_path / "w.sqlite")
    actions = tmp_path / "actions.jsonl"
    search = call("c1", "searchlogs", path="logs/fifo_smoke.log", query="UVM_ERROR")
    actions.write_text(json.dumps(search) + "\n" + json.dumps(stop("read")) + "\n")
    asked = warrant(
        "ask",
        "why did fifo_smoke fail?",
        "--in",
        str(folder),
        "--chooser",
        f"file:{actions}",
        "--json",
        "--db",
        db,
        cwd=tmp_path,
    )
    assert asked.returncode == 0, asked.stderr
    shown = json.loads(asked.stdout)
    assert (shown["route"], shown["scenario"]) == (
        "research",
        str((folder / "scenario.toml").resolve()),
    )
    assert shown["handover"]["goal"] == "why did fifo_smoke fail?"
    assert [item["ref"] for item in shown["handover"]["evidence"]] == ["E1"]
    events = json.loads(
        warrant("events", shown["entry"], "--db", db, "--json", cwd=tmp_path).stdout
    )
    admitted = events[0]
    assert admitted["type"] == "admitted"
    assert admitted["payload"]["entry"] == {
        "question": "why did fifo_smoke fail?",
        "route": "research",
        "reason": shown["reason"],
        "by": "entry:rules",
    }


def test_bad_roots_are_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    for given, says in (
        (str(tmp_path / "nowhere"), "is not a built-in scenario"),
        (str(tmp_path / "empty"), "no scenario manifest (*.toml) in that folder"),
    ):
        failed = warrant("ask", "why did it fail?", "--in", given, cwd=tmp_path)
        assert failed.returncode == 2 and failed.stderr.count("\n") == 1, failed.stderr
        assert says in failed.stderr
    both = warrant("ask", "x", "--research", "--direct", cwd=tmp_path)
    assert both.returncode == 2 and "opposite routes" in both.stderr


def test_a_scenario_outside_the_roots_is_refused(folder):
    found = candidates(str(folder))
    with pytest.raises(EntryError, match="outside your scenario roots"):
        found.chosen("R42")  # a built-in, but not among --in's candidates
    with pytest.raises(EntryError, match="outside your scenario roots"):
        found.chosen("/etc/passwd")
    assert found.chosen(str((folder / "scenario.toml").resolve())).name == "scenario.toml"
