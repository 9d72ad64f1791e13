"""`warrant scenario new FOLDER` drafts waveforms, PDF specifications and git repositories too: a
`.vcd`/`.fst` file is a `waveform` record, a `.pdf` a `spec` (admitted as a PDF by its bytes), and
a work tree's or a bare repository's folder a `repository` record, nothing inside it drafted."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from lab import LAB_DIR
from lab.rtlgen import REPOSITORY
from scenario.registry import load_scenario
from tests.cli_process import warrant
from tests.tools.repo.gitmade import one_commit

DATA = Path(__file__).resolve().parents[2] / "data"


def test_waveforms_pdfs_and_repositories_are_drafted_by_kind(tmp_path):
    folder = tmp_path / "night"
    (folder / "waves").mkdir(parents=True)
    shutil.copy(DATA / "waveforms" / "counter.vcd", folder / "waves" / "counter.vcd")
    shutil.copy(DATA / "waveforms" / "counter.fst", folder / "waves" / "counter.fst")
    (folder / "spec").mkdir()
    shutil.copy(DATA / "pdfs" / "hello_world_2_pages.pdf", folder / "spec" / "hello.pdf")
    (folder / "run.log").write_text("UVM_INFO hello\n")
    one_commit(folder / "design", {"rtl/top.sv": b"module top; endmodule\n"}, "2026-12-01T08:00Z")
    shutil.copytree(REPOSITORY, folder / "ip.git")
    result = warrant("scenario", "new", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = folder / "scenario.toml"
    tables = tomllib.loads(manifest.read_text())["record"]
    kinds = {table.get("path") or table["glob"]: table["kind"] for table in tables}
    assert kinds == {
        "waves/counter.vcd": "waveform",
        "waves/counter.fst": "waveform",
        "spec/hello.pdf": "spec",
        "run.log": "log",
        "design": "repository",
        "ip.git": "repository",
    }
    scenario = load_scenario(manifest)
    assert scenario.records["spec/hello.pdf"].media == "pdf"
    assert len(scenario.records["ip.git"].sha256) == 40  # the pinned HEAD commit


def test_a_repository_is_not_drafted_for_an_sta_folder(tmp_path):
    folder = tmp_path / "timing"
    folder.mkdir()
    (folder / "setup.rpt").write_text((LAB_DIR / "sta" / "setup_after.rpt").read_text())
    shutil.copytree(REPOSITORY, folder / "ip.git")
    result = warrant("scenario", "new", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ip.git: a git repository" in result.stderr
    kinds = {
        table["kind"] for table in tomllib.loads((folder / "scenario.toml").read_text())["record"]
    }
    assert kinds == {"sta_report"}
