"""searchdocs in the governed loop: the guard resolves every approved spec (the receipt's sources
name each), and a handover's citation of a candidate's line is unresolved."""

from __future__ import annotations

import textwrap
from pathlib import Path

from lab.pdfgen import make_pdf
from tests.graph.test_family_tools import _toml_table
from tests.helpers import call, run_embedded, scenario_head, stop


def manifest(root: Path, script: list[dict], specs: bool = True) -> Path:
    (root / "t.log").write_text("UVM_ERROR clk_en not asserted @ 265000\n")
    (root / "clocks.md").write_text("# Clocks\n\n## Clock enable\n\nclk_en gates the clock.\n")
    (root / "manual.pdf").write_bytes(make_pdf([["Timing"], ["clk_en rises after reset"]]))
    records = '[[record]]\nid = "t.log"\nkind = "log"\npath = "t.log"\n'
    if specs:
        records += textwrap.dedent("""\
            [[record]]
            id = "clocks.md"
            kind = "spec"
            path = "clocks.md"
            [[record]]
            id = "manual.pdf"
            kind = "spec"
            path = "manual.pdf"
            """)
    steps = "\n".join(f"[[script]]\n{_toml_table(step)}" for step in script)
    path = root / "scenario.toml"
    path.write_text(
        scenario_head("DOCS", "Where is clk_en specified?", steps=4, evidence=2, deadline_s=120)
        + records
        + steps
    )
    return path


def test_every_spec_is_read_and_no_candidate_line_is_cited(tmp_path):
    cited = stop("clk_en", hypotheses=[{"statement": "clk_en", "refs": ["E1", "E1:L5"]}])
    state = run_embedded(str(manifest(tmp_path, [call("c1", "searchdocs", query="clk_en"), cited])))
    [item] = state["evidence"]
    assert item["tool"] == "searchdocs" and item["error"] is None
    assert [source["record"] for source in item["sources"]] == ["clocks.md", "manual.pdf"]
    assert any(
        line["text"].endswith(" clocks.md:5: clk_en gates the clock.") for line in item["excerpt"]
    )
    [bound] = state["handover"]["hypotheses"]
    assert bound["refs"] == ["E1"] and bound["unresolved"] == ["E1:L5"]


def test_a_grant_without_a_spec_refuses_the_call_in_one_line(tmp_path):
    script = [call("c1", "searchdocs", query="clk_en"), stop()]
    state = run_embedded(str(manifest(tmp_path, script, specs=False)))
    assert state["evidence"] == []
    [refusal] = [r for r in state["refusals"] if r["code"] == "unapproved_record"]
    assert "approves no spec record: searchdocs has nothing to read" in refusal["detail"]


def test_a_handover_with_candidates_renders(tmp_path):
    from graph.present.render import handover_markdown

    cited = stop("clk_en", hypotheses=[{"statement": "clk_en", "refs": ["E1", "E1:L5"]}])
    state = run_embedded(str(manifest(tmp_path, [call("c1", "searchdocs", query="clk_en"), cited])))
    text = handover_markdown(state["handover"])
    assert "clocks.md:5: clk_en gates the clock." in text and "not read" in text


def test_each_candidate_line_has_its_own_anchor(tmp_path):
    from graph.present.anchors import line_anchors

    state = run_embedded(
        str(manifest(tmp_path, [call("c1", "searchdocs", query="clk_en timing"), stop()]))
    )
    [item] = state["evidence"]
    anchors = line_anchors(item)
    assert len(anchors) == len(item["excerpt"]) == len(set(anchors))
