"""readpages is shown to a chooser only where the grant holds a PDF spec: a scenario without one
(R42-memory, whose recorded model requests pin the tools shown) sees the catalog it always saw."""

from pathlib import Path

from lab.pdfgen import make_pdf
from nodes.choose import _catalog
from scenario.profiles import PROFILE_TOOLS
from scenario.registry import load_scenario
from tests.helpers import PLAIN_TRIAGE_TOOLS

R42_MEMORY = Path(__file__).resolve().parents[3] / "lab" / "R42-memory.toml"


def test_readpages_comes_after_the_tools_a_markdown_scenario_is_shown():
    """The tools shown before it keep their places, so their recorded requests hold."""
    triage = PROFILE_TOOLS["triage"]
    assert "readpages" in triage
    assert triage.index("readpages") >= len(PLAIN_TRIAGE_TOOLS)


def test_a_grant_without_a_pdf_spec_is_not_shown_readpages():
    grant = load_scenario(R42_MEMORY).model_dump(mode="json")
    assert all("media" not in record for record in grant["records"].values())
    assert [entry["name"] for entry in _catalog(grant)] == PLAIN_TRIAGE_TOOLS


def test_a_grant_with_a_pdf_spec_is_shown_readpages(tmp_path):
    (tmp_path / "clocks.pdf").write_bytes(make_pdf([["Clock enable"]]))
    (tmp_path / "notes.md").write_text("# Notes\n")
    manifest = tmp_path / "s.toml"
    manifest.write_text(
        'id = "PDF"\nprofile = "triage"\n'
        '[[record]]\nid = "clocks"\nkind = "spec"\npath = "clocks.pdf"\n'
        '[[record]]\nid = "notes"\nkind = "spec"\npath = "notes.md"\n'
    )
    grant = load_scenario(manifest).model_dump(mode="json")
    assert grant["records"]["clocks"]["media"] == "pdf"
    assert "media" not in grant["records"]["notes"]
    assert "readpages" in [entry["name"] for entry in _catalog(grant)]
