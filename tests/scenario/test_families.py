"""Record families: one `[[record]] glob = …` approves each file it matches, under its relative
path as an exact id, confined to the manifest's folder like any record."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contract.errors import ManifestError
from ledger.context import WarrantContext
from nodes.choosers import ScriptedChooser
from scenario.families import matches
from scenario.registry import load_scenario
from tests.helpers import run_embedded

HEADER = 'id = "FAM"\nprofile = "triage"\ngoal = "Why did fifo_basic fail?"\n'


def regression(folder: Path, tables: str) -> Path:
    """A folder of run logs (three tests, two runs), a spec, and a manifest with `tables`."""
    for run in ("R41", "R42"):
        for test in ("reset_smoke", "fifo_basic", "dma_burst"):
            path = folder / "runs" / run / f"{test}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"UVM_INFO @ 0: reporter [RNTST] Running test {test} in {run}\n")
    (folder / "runs" / "R42" / "notes.txt").write_text("not a log\n")
    (folder / "runs" / "R42" / "sub.log").mkdir()  # a folder named like a log
    manifest = folder / "s.toml"
    manifest.write_text(HEADER + tables)
    return manifest


FAMILY = '[[record]]\nglob = "runs/R42/*.log"\nkind = "log"\n'


def test_each_matching_file_is_a_record_under_its_relative_path(tmp_path):
    scenario = load_scenario(regression(tmp_path, FAMILY))
    expected = sorted(  # computed apart: the files, not the folder, of that pattern
        path.relative_to(tmp_path).as_posix()
        for path in (tmp_path / "runs" / "R42").iterdir()
        if path.suffix == ".log" and path.is_file()
    )
    assert (
        sorted(scenario.records)
        == expected
        == [
            "runs/R42/dma_burst.log",
            "runs/R42/fifo_basic.log",
            "runs/R42/reset_smoke.log",
        ]
    )
    assert {record.kind for record in scenario.records.values()} == {"log"}


def test_families_and_single_records_mix_and_an_id_may_not_appear_twice(tmp_path):
    tables = (
        FAMILY
        + '[[record]]\nid = "runs/R42/reset_smoke.log"\npath = "runs/R41/reset_smoke.log"\nkind = "log"\n'
    )
    with pytest.raises(ManifestError, match="appears twice"):
        load_scenario(regression(tmp_path, tables))


@pytest.mark.parametrize(
    ("glob", "said"),
    [
        ("runs/**/*.log", "is not supported"),
        ("../runs/*.log", "leaves the manifest's folder"),
        ("/etc/*", "not a plain relative pattern"),
        ("runs/R99/*.log", "matches no file"),
    ],
)
def test_a_pattern_that_cannot_name_a_family_is_refused_in_one_line(tmp_path, glob, said):
    tables = f'[[record]]\nglob = "{glob}"\nkind = "log"\n'
    with pytest.raises(ManifestError, match=said) as raised:
        load_scenario(regression(tmp_path, tables))
    assert "\n" not in str(raised.value)


def test_a_symlink_out_of_the_folder_is_refused_not_skipped(tmp_path):
    outside = tmp_path / "outside.log"
    outside.write_text("secret\n")
    folder = tmp_path / "scenario"
    manifest = regression(folder, FAMILY)
    os.symlink(outside, folder / "runs" / "R42" / "zz_link.log")
    with pytest.raises(ManifestError, match="leaves the manifest's folder"):
        load_scenario(manifest)


def test_a_table_with_a_glob_and_a_path_says_what_is_extra(tmp_path):
    tables = '[[record]]\nglob = "runs/R42/*.log"\npath = "x"\nkind = "log"\n'
    with pytest.raises(
        ManifestError, match=r"record\.0\.family\.path: Extra inputs are not permitted"
    ):
        load_scenario(regression(tmp_path, tables))


@pytest.mark.parametrize(
    ("pattern", "relative", "named"),
    [
        ("runs/R42/*.log", "runs/R42/a.log", True),
        ("runs/R42/*.log", "runs/R42/x/a.log", False),  # `*` stays within one folder level
        ("runs/*/*.log", "runs/R42/a.log", True),
        ("runs/*/a.log", "runs/../a.log", False),  # `..` is never a name
        ("runs/*/a.log", "runs/./a.log", False),
        ("runs/R4?/[ab].log", "runs/R42/b.log", True),
    ],
)
def test_a_pattern_names_paths_component_by_component(pattern, relative, named):
    assert matches(pattern, relative) is named


def test_a_chooser_reads_a_family_record_by_its_id_and_nothing_else(tmp_path):
    manifest = regression(tmp_path, FAMILY)
    call = {"path": "runs/R42/fifo_basic.log", "query": "Running", "limit": 5}
    outside = {"path": "runs/R41/fifo_basic.log", "query": "Running", "limit": 5}
    script = [
        {"summary": "read", "tool_calls": [{"id": "c1", "name": "searchlogs", "args": call}]},
        {
            "summary": "other run",
            "tool_calls": [{"id": "c2", "name": "searchlogs", "args": outside}],
        },
        {"summary": "stop", "message": {"kind": "stop", "text": "done"}},
    ]
    context = WarrantContext(choosers={"fam": ScriptedChooser(script)})
    state = run_embedded(str(manifest), "fam", context=context)
    [item] = state["evidence"]
    assert item["record"] == "runs/R42/fifo_basic.log" and item["error"] is None
    assert item["excerpt"][0]["text"].endswith("Running test fifo_basic in R42")
    assert [refusal["code"] for refusal in state["refusals"]] == ["unapproved_record"]
