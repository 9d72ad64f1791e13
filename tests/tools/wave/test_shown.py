"""The waveform tool is shown to a chooser only where a waveform record is approved: a scenario
without one keeps its catalog (recorded cassettes pin the tools shown)."""

from __future__ import annotations

from nodes.choose import _catalog
from scenario.profiles import PROFILE_TOOLS


def names(kinds: list[str]) -> list[str]:
    records = {f"r{index}": {"id": f"r{index}", "kind": kind} for index, kind in enumerate(kinds)}
    return [entry["name"] for entry in _catalog({"profile": "triage", "records": records})]


def test_without_a_waveform_record_the_catalog_is_as_before():
    shown = names(["log", "spec"])
    assert "waveform" not in shown
    assert shown == [name for name in PROFILE_TOOLS["triage"] if name in shown]


def test_with_a_waveform_record_the_tool_is_shown_last():
    assert names(["log", "waveform"])[-1] == "waveform"
