"""The `changes` tool is shown to a chooser only where the manifest approves a repository: a
scenario without one is shown the catalog (and so sends the model requests) it did before."""

from __future__ import annotations

from pathlib import Path

from nodes.choose import _catalog
from scenario.registry import load_scenario
from tests.helpers import PLAIN_TRIAGE_TOOLS
from tests.tools.repo import gitmade

LAB = Path(__file__).resolve().parents[2] / "lab"


def names(grant: dict) -> list[str]:
    return [entry["name"] for entry in _catalog(grant)]


def test_a_scenario_without_a_repository_is_not_shown_changes():
    shown = names(load_scenario(LAB / "R42-memory.toml").model_dump())
    assert shown == PLAIN_TRIAGE_TOOLS


def test_a_scenario_with_a_repository_is_shown_changes_last(tmp_path):
    gitmade.one_commit(tmp_path / "design", {"a.sv": b"x\n"}, "2026-12-01T00:00:00+00:00")
    manifest = tmp_path / "m.toml"
    manifest.write_text(
        'id = "G"\nprofile = "triage"\n[[record]]\nid = "design"\nkind = "repository"\n'
        'path = "design"\n'
    )
    assert names(load_scenario(manifest).model_dump())[-1] == "changes"
