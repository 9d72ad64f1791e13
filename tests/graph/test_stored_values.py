"""Values JSON has no word for — NaN, ±inf, integers past 64 bits — in a tool's result: the run
ends as any other, on every store, its ledger verifies and its handover shows the values.

The expected values come from the history CSV as Python reads it (its seeds summed with Python's
integers, its slacks read by `float`), not from the code under test."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.build import compile_graph
from graph.delivery.artifacts import render_artifacts
from graph.present.render import handover_markdown
from graph.runs.ledger import ledger_break
from tests.cli_process import run_json, warrant
from tests.helpers import call, recorded, run_embedded, stop

SEEDS = ["9223372036854775807", "9223372036854775807", "9223372036854775806"]
SLACKS = ["nan", "1e999", "-inf"]
QUERY = (
    "select run, slack, sum(seed) over () as seeds,"
    " cast(sum(seed) over () as double) as seeds_f from h order by run"
)
MANIFEST = """\
id = "VALUES"
profile = "triage"
goal = "What do the seeds and slacks of the history say?"
[budget]
steps = 4
evidence = 2
deadline_s = 120
[[record]]
id = "v/history.csv"
kind = "history"
path = "history.csv"
"""


def scenario(root: Path) -> tuple[str, str]:
    """A scenario of one history whose seeds sum past 64 bits and whose slacks are NaN and
    infinities; an action file that analyzes it and stops: (manifest, chooser)."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [["run", "date", "test", "status", "seed", "slack"]]
    rows += [
        [f"A{n}", f"2026-01-0{n}", "t", "FAIL", seed, slack]
        for n, (seed, slack) in enumerate(zip(SEEDS, SLACKS, strict=True), 1)
    ]
    with (root / "history.csv").open("w", newline="") as out:
        csv.writer(out).writerows(rows)
    (root / "scenario.toml").write_text(MANIFEST)
    actions = root / "actions.jsonl"
    documents = [
        call("a1", "analyze", query=QUERY, tables={"h": "v/history.csv"}),
        stop("read", hypotheses=[{"statement": "the seeds sum past 64 bits", "refs": ["E1"]}]),
    ]
    actions.write_text("".join(json.dumps(document) + "\n" for document in documents))
    return str(root / "scenario.toml"), f"file:{actions}"


def expected_rows(root: Path) -> list[tuple[str, float, int, float]]:
    """The rows as Python reads the CSV: run, slack, the sum of all seeds (and as a float)."""
    with (root / "history.csv").open(newline="") as raw:
        rows = list(csv.DictReader(raw))
    total = sum(int(row["seed"]) for row in rows)
    return [(row["run"], float(row["slack"]), total, float(total)) for row in rows]


def decoded(cell: Any) -> Any:
    """A stored cell as the documented typed forms say: `{"$float": text}`, `{"$int": digits}`."""
    if isinstance(cell, dict) and set(cell) == {"$float"}:
        return float(cell["$float"])
    if isinstance(cell, dict) and set(cell) == {"$int"}:
        return int(cell["$int"])
    return cell


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


def assert_values_kept(handover: dict[str, Any], root: Path) -> None:
    assert handover["status"] == "stopped", handover["refusals"]
    (item,) = handover["evidence"]
    assert item["error"] is None and item["tool"] == "analyze"
    computed = item["computed"]
    assert computed["columns"] == ["run", "slack", "seeds", "seeds_f"]
    json.dumps(computed, allow_nan=False)  # plain JSON: no NaN, no infinity
    got = [tuple(decoded(cell) for cell in row) for row in computed["rows"]]
    want = expected_rows(root)
    assert len(got) == len(want)
    for row, expected in zip(got, want, strict=True):
        assert all(same(a, b) for a, b in zip(row, expected, strict=True)), (row, expected)
    assert computed["rows"][0][1] == {"$float": "NaN"}
    assert computed["rows"][1][1] == {"$float": "Infinity"}
    assert computed["rows"][2][1] == {"$float": "-Infinity"}
    total = sum(int(seed) for seed in SEEDS)
    assert computed["rows"][0][2] == {"$int": str(total)}
    assert computed["rows"][0][3] == {"$float": repr(float(total))}  # 2.76…e+19


def assert_shown(text: str) -> None:
    total = str(sum(int(seed) for seed in SEEDS))
    for run, slack in zip(("A1", "A2", "A3"), ("nan", "inf", "-inf"), strict=True):
        assert f"{run} | {slack} | {total} | {float(total)!r}" in text


def test_on_memory_the_run_ends_verifies_resumes_and_shows_the_values(tmp_path):
    manifest, chooser = scenario(tmp_path / "values")
    graph = compile_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"scenario": manifest, "chooser": chooser}, config, durability="sync")
    state = recorded(graph, config)
    assert_values_kept(state["handover"], tmp_path / "values")
    assert ledger_break("t1", state) is None
    graph.invoke(None, config, durability="sync")  # a resume finds the run ended
    again = recorded(graph, config)
    assert again["handover"] == state["handover"] and ledger_break("t1", again) is None
    assert_shown(handover_markdown(again["handover"]))


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("postgres_url")


def test_on_a_database_the_run_ends_verifies_resumes_and_shows_the_values(db, tmp_path):
    root = tmp_path / "values"
    manifest, chooser = scenario(root)
    handover = run_json(
        "run", manifest, "--chooser", chooser, "--db", db, "--thread", "V", cwd=tmp_path
    )
    assert_values_kept(handover, root)
    verified = warrant("events", "V", "--verify", "--db", db, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "chain intact" in verified.stdout
    shown = warrant("show", "V", "--db", db, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert_shown(shown.stdout)
    again = warrant("show", "V", "--db", db, "--json", cwd=tmp_path)
    assert_values_kept(json.loads(again.stdout), root)
    resumed = warrant("resume", "V", "--db", db, "--json", "--quiet", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert_values_kept(json.loads(resumed.stdout), root)


NUL_MANIFEST = """\
id = "NUL"
profile = "triage"
goal = "Why did t fail?"
[budget]
steps = 4
evidence = 2
deadline_s = 120
[[record]]
id = "v/t.log"
kind = "log"
path = "t.log"
"""


def test_a_log_line_holding_a_nul_is_shown_escaped_and_flagged_on_every_store(db, tmp_path):
    """A log line holding a NUL (no PostgreSQL text holds one): shown with the NUL escaped and
    flagged, as undecodable bytes are, so the evidence is kept on every store and the ledger
    verifies."""
    root = tmp_path / "nul"
    root.mkdir()
    (root / "t.log").write_bytes(b"UVM_ERROR a\x00b overflow\nTEST FAILED\n")
    (root / "scenario.toml").write_text(NUL_MANIFEST)
    actions = root / "actions.jsonl"
    documents = [
        call("n1", "searchlogs", path="v/t.log", query="UVM_ERROR"),
        call("n2", "searchlogs", path="v/t.log", query="TEST FAILED"),
        stop("read"),
    ]
    actions.write_text("".join(json.dumps(document) + "\n" for document in documents))
    manifest, chooser = str(root / "scenario.toml"), f"file:{actions}"
    handover = run_json(
        "run", manifest, "--chooser", chooser, "--db", db, "--thread", "N", cwd=tmp_path
    )
    assert handover["status"] == "stopped"
    escaped, read = handover["evidence"]
    [line] = escaped["excerpt"]
    assert escaped["error"] is None and line["text"] == "UVM_ERROR a\\x00b overflow"
    assert line["flags"] == ["undecodable_bytes"]
    assert read["error"] is None and [line["text"] for line in read["excerpt"]] == ["TEST FAILED"]
    verified = warrant("events", "N", "--verify", "--db", db, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_numbers_json_has_no_word_for_in_a_proposal_are_refused_and_recorded(db, tmp_path):
    """The chooser's side of the same class: NaN, 1e400 (an infinity), -0.0 and 1e20 as
    arguments are refused, and the refusals (quoting the call in typed forms) are stored and
    verify on every store."""
    root = tmp_path / "proposals"
    root.mkdir()
    (root / "t.log").write_text("UVM_ERROR a\nTEST FAILED\n")
    (root / "scenario.toml").write_text(NUL_MANIFEST.replace("steps = 4", "steps = 6"))
    texts = ["NaN", "1e400", "-0.0", "1e20"]
    lines = [
        json.dumps(call(f"p{n}", "searchlogs", path="v/t.log", query="UVM", limit=0)).replace(
            '"limit": 0', f'"limit": {text}'
        )
        for n, text in enumerate(texts, 1)
    ]
    actions = root / "actions.jsonl"
    actions.write_text("\n".join([*lines, json.dumps(stop("read"))]) + "\n")
    chooser = f"file:{actions}"
    handover = run_json(
        "run",
        str(root / "scenario.toml"),
        "--chooser",
        chooser,
        "--db",
        db,
        "--thread",
        "P",
        cwd=tmp_path,
    )
    assert handover["status"] == "stopped"
    refusals = handover["refusals"]
    assert [refusal["code"] for refusal in refusals] == ["invalid_argument"] * 4
    limits = [refusal["call"]["args"]["limit"] for refusal in refusals]
    assert limits == [
        {"$float": "NaN"},
        {"$float": "Infinity"},
        {"$float": "-0.0"},
        {"$float": "1e+20"},
    ]
    verified = warrant("events", "P", "--verify", "--db", db, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def plotted(tmp_path: Path, plot: dict[str, Any]) -> dict[str, Any]:
    """The handover of the values scenario's analysis, asked for `plot`."""
    manifest, _ = scenario(tmp_path / "values")
    actions = tmp_path / "plot.jsonl"
    documents = [
        call("a1", "analyze", query=QUERY, tables={"h": "v/history.csv"}, plot=plot),
        stop("read"),
    ]
    actions.write_text("".join(json.dumps(document) + "\n" for document in documents))
    return run_embedded(manifest, f"file:{actions}")["handover"]


def test_a_figure_reads_the_typed_numbers_and_names_what_it_cannot_draw(tmp_path):
    total = str(sum(int(seed) for seed in SEEDS))
    handover = plotted(tmp_path, {"kind": "bar", "x": "seeds", "y": "seeds_f"})
    contents, artifacts = render_artifacts(handover)
    figure = artifacts[3]
    assert figure.error is None and figure.sha256 in contents
    assert total in contents[figure.sha256]  # the bars' labels: the integer's digits
    handover = plotted(tmp_path / "2", {"kind": "histogram", "x": "slack"})
    figure = render_artifacts(handover)[1][3]
    assert figure.error == "column 'slack' holds NaN or an infinity, which cannot be drawn"
