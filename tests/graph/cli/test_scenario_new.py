"""`warrant scenario new FOLDER`: a reviewable manifest that approves a folder's records by kind."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from lab import LAB_DIR
from scenario.registry import load_scenario
from tests.cli_process import warrant


def regression(folder: Path) -> Path:
    for test in ("reset_smoke", "fifo_basic", "dma_burst"):
        (folder / "runs" / "R42").mkdir(parents=True, exist_ok=True)
        (folder / "runs" / "R42" / f"{test}.log").write_text(f"UVM_INFO run {test}\n")
    (folder / "spec").mkdir()
    (folder / "spec" / "ctrl.md").write_text("# Ctrl\n")
    (folder / "history").mkdir()
    (folder / "history" / "runs.csv").write_text("run,date,test,status\nR42,d,reset_smoke,FAIL\n")
    (folder / "history" / "metrics.csv").write_text("date,wns\nd,-0.1\n")
    (folder / "sta").mkdir()
    (folder / "sta" / "setup.rpt").write_bytes((LAB_DIR / "sta" / "setup_after.rpt").read_bytes())
    (folder / "README").write_text("not a record\n")
    return folder


def test_a_folder_becomes_a_manifest_that_admits_each_record_by_kind(tmp_path):
    folder = regression(tmp_path / "nightly")
    result = warrant("scenario", "new", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = folder / "scenario.toml"
    document = tomllib.loads(manifest.read_text())
    assert document["id"] == "nightly" and document["profile"] == "triage"
    assert {"glob": "runs/R42/*.log", "kind": "log"} in document["record"]
    scenario = load_scenario(manifest)
    expected = {  # computed apart: the triage files, less the history without its columns
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.suffix in (".log", ".md", ".csv") and path.name != "metrics.csv"
    }
    assert set(scenario.records) == expected
    assert "left out: history/metrics.csv: not a history (lacks run, test, status)" in result.stderr
    assert "left out: sta/setup.rpt: an STA report" in result.stderr
    assert "review it before a run" in result.stderr


def test_an_sta_folder_drafts_an_sta_scenario(tmp_path):
    folder = tmp_path / "timing"
    folder.mkdir()
    for name in ("setup_before.rpt", "setup_after.rpt"):
        (folder / name).write_bytes((LAB_DIR / "sta" / name).read_bytes())
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    scenario = load_scenario(folder / "scenario.toml")
    assert scenario.profile == "sta" and set(scenario.records) == {
        "setup_before.rpt",
        "setup_after.rpt",
    }


@pytest.mark.parametrize(
    ("families", "history", "evidence"),
    # one triage per family, three reads and, with a history, three histories; never under 6
    [(1, True, 1 + 3 + 3), (1, False, 6), (5, True, 5 + 3 + 3), (4, False, 4 + 3)],
)
def test_a_triage_draft_budgets_the_baseline_plan(tmp_path, families, history, evidence):
    folder = tmp_path / "nightly"
    for index in range(families):
        (folder / "runs" / f"N{index}").mkdir(parents=True)
        (folder / "runs" / f"N{index}" / "a.log").write_text("UVM_INFO a\n")
        (folder / "runs" / f"N{index}" / "b.log").write_text("UVM_INFO b\n")
    if history:
        (folder / "runs.csv").write_text("run,date,test,status\nN0,d,a,FAIL\n")
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    budget = load_scenario(folder / "scenario.toml").budget
    assert (budget.evidence, budget.steps) == (evidence, 8)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (os.symlink, "a symlink"),
        (os.link, "2 hard links (a record must be a file of its own"),
    ],
)
def test_a_link_is_left_out_in_the_draft_and_on_stderr_and_its_neighbours_kept(
    tmp_path, make, said
):
    """Admission refuses a symlink, and a file with two names (either can reach outside the
    folder): the draft never names one, so the manifest it writes is admitted."""
    folder = regression(tmp_path / "nightly")
    outside = tmp_path / "elsewhere.log"
    outside.write_text("secret\n")
    make(outside, folder / "runs" / "R42" / "link.log")
    result = warrant("scenario", "new", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    line = f"left out: runs/R42/link.log: {said}"
    assert line in result.stderr and f"# {line}" in (folder / "scenario.toml").read_text()
    scenario = load_scenario(folder / "scenario.toml")  # admits: no glob reaches the link
    assert (
        "runs/R42/link.log" not in scenario.records and "runs/R42/dma_burst.log" in scenario.records
    )


def test_bad_input_is_one_line_and_nothing_is_overwritten(tmp_path):
    folder = regression(tmp_path / "nightly")
    assert warrant("scenario", "new", str(folder), cwd=tmp_path).returncode == 0
    written = (folder / "scenario.toml").read_text()
    for args, said in [
        ((str(folder),), "exists; give --force"),
        ((str(folder), "--output", str(tmp_path / "x.toml")), "must be in"),
        ((str(tmp_path / "missing"),), "is not a folder"),
    ]:
        result = warrant("scenario", "new", *args, cwd=tmp_path)
        assert result.returncode == 2 and said in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert (folder / "scenario.toml").read_text() == written
    assert (
        warrant("scenario", "new", str(folder), "--force", "--id", "N1", cwd=tmp_path).returncode
        == 0
    )
    assert load_scenario(folder / "scenario.toml").id == "N1"


def test_a_draft_admission_refuses_is_never_written(tmp_path):
    """Whatever admission refuses in a draft (here a record that gained a second name after the
    folder was looked at), nothing is written: no draft, and the manifest it would replace kept."""
    from scenario.draft import admitted_draft, draft_manifest
    from scenario.registry import ManifestError

    folder = regression(tmp_path / "nightly")
    (folder / "scenario.toml").write_text("# mine\n")
    text, _ = draft_manifest(folder, "nightly")
    os.link(folder / "spec" / "ctrl.md", tmp_path / "twin.md")
    with pytest.raises(ManifestError, match="hard links"):
        admitted_draft(folder / "scenario.toml", text)
    assert (folder / "scenario.toml").read_text() == "# mine\n"
    assert [path.name for path in folder.iterdir() if path.name.startswith(".")] == []
