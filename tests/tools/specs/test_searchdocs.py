"""searchdocs over Markdown specs and a PDF written here; what is expected is counted here from the
text written, never taken from the tool."""

import os
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from contract.errors import RecordRefusal
from guards.checks import every_record
from guards.citations import bind_lines, citable_lines, shown_commits
from lab.pdfgen import make_pdf
from nodes.choose import _catalog
from scenario.profiles import PROFILE_TOOLS
from scenario.reading import reading
from scenario.registry import load_scenario
from tools.catalog import tools_of
from tools.specs import searchdocs
from tools.specs.docindex import match_expression
from tools.specs.searchdocs import SearchDocsArgs

CLOCKS = """# Clocks

Every block has one clock.

## Reset release

The reset is released two cycles after the clock starts.

## Clock enable

clk_en gates the core clock.
clk_en must be asserted within 4 cycles of reset release.
When clk_en is low the core holds its state.
The enable is sampled on the rising edge; clk_en is never gated twice.

## Power

Near the body of the chip, the supply rails are checked.
"""
NOTES = """Notes kept before any heading.

# Test plan

The test asserts clk_en once.
"""
PAGES = [
    ["Register map", "CTRL at 0x0 holds the enable bit"],
    ["Timing", "clk_en rises after reset", "nothing else here"],
]


def scenario(tmp_path, specs=True):
    (tmp_path / "run.log").write_text("UVM_ERROR clk_en not asserted @ 265000\n")
    records = '[[record]]\nid = "log"\nkind = "log"\npath = "run.log"\n'
    if specs:
        (tmp_path / "clocks.md").write_text(CLOCKS)
        (tmp_path / "notes.md").write_text(NOTES)
        (tmp_path / "manual.pdf").write_bytes(make_pdf(PAGES))
        records += "".join(
            f'[[record]]\nid = "{name}"\nkind = "spec"\npath = "{name}"\n'
            for name in ("clocks.md", "notes.md", "manual.pdf")
        )
    manifest = tmp_path / "s.toml"
    manifest.write_text(f'id = "S"\nprofile = "triage"\n{records}')
    return load_scenario(manifest)


def search(loaded, query, limit=5):
    records = {f"every.{r.id}": r for r in every_record(loaded, "spec", "searchdocs")}
    return searchdocs.run(SearchDocsArgs(query=query, limit=limit), records)


def passages():
    """(record, place) → [(line number, text)], split here: at each `#` line, and by page."""
    found: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for name, text in (("clocks.md", CLOCKS), ("notes.md", NOTES)):
        place = "before the first heading"
        for number, line in enumerate(text.splitlines(), start=1):
            if line.startswith("#"):
                place = f"section {line.lstrip('#').strip()!r}"
            found.setdefault((name, place), []).append((number, line))
    for page, lines in enumerate(PAGES, start=1):
        found[("manual.pdf", f"page {page}")] = list(enumerate(lines, start=1))
    return found


def count(words, lines):
    return sum(1 for _, text in lines for word in re.findall(r"\w+", text.lower()) if word in words)


def candidates(excerpt):
    """(record, place) of each candidate's heading line, in order."""
    heads = [
        re.match(r"#\d+ (\S+)@[0-9a-f]{12}:\d+: (.+), lines? ", line.text) for line in excerpt.lines
    ]
    return [(head[1], head[2]) for head in heads if head]


def test_the_passage_holding_most_query_words_comes_first(tmp_path):
    excerpt = search(scenario(tmp_path), "clk_en enable")
    counts = {key: count({"clk_en", "enable"}, lines) for key, lines in passages().items()}
    best = max(counts, key=counts.__getitem__)
    assert sorted(counts.values())[-1] > 2 * sorted(counts.values())[-2]  # unambiguous
    found = candidates(excerpt)
    assert found[0] == best == ("clocks.md", "section 'Clock enable'")
    assert all(counts[key] > 0 for key in found)  # every candidate holds a query word
    assert set(found) == {key for key, n in counts.items() if n}  # and none holding one is missed
    assert "not read" in excerpt.summary


def test_matching_lines_are_numbered_as_written(tmp_path):
    excerpt = search(scenario(tmp_path), "clk_en")
    written = dict(enumerate(CLOCKS.splitlines(), start=1))
    shown = [line for line in excerpt.lines if line.text.startswith("#1 clocks.md:")]
    assert shown and all(
        line.text == f"#1 clocks.md:{line.number}: {written[line.number]}" for line in shown
    )
    assert all("clk_en" in line.text for line in shown)
    page = [line for line in excerpt.lines if ":p2:" in line.text]
    assert [(line.number, line.text.split(" ", 1)[1]) for line in page] == [
        (2, "manual.pdf:p2:2: clk_en rises after reset")
    ]


def test_limit_bounds_the_candidates_and_says_more_were_found(tmp_path):
    loaded = scenario(tmp_path)
    everywhere = search(loaded, "the", limit=20)
    holding = [key for key, lines in passages().items() if count({"the"}, lines)]
    assert len(candidates(everywhere)) == len(holding) > 2 and not everywhere.truncated
    two = search(loaded, "the", limit=2)
    assert len(candidates(two)) == 2 and two.truncated
    assert candidates(two) == candidates(everywhere)[:2]
    with pytest.raises(ValidationError):
        SearchDocsArgs(query="x", limit=21)
    with pytest.raises(ValidationError):
        SearchDocsArgs(query="x", limit=0)


@pytest.mark.parametrize(
    "query", ['clk_en" OR *', "NEAR(clk_en reset)", "body:near", 'reset* AND "the', "^clk_en -x"]
)
def test_fts_syntax_in_a_query_is_words(tmp_path, query):
    excerpt = search(scenario(tmp_path), query, limit=20)
    words = set(re.findall(r"\w+", query.lower()))
    counts = {key: count(words, lines) for key, lines in passages().items()}
    assert set(candidates(excerpt)) == {key for key, n in counts.items() if n}


def test_the_match_expression_quotes_every_word():
    assert match_expression(["near", 'a"b', "near"]) == '"near" OR "a""b"'


@pytest.mark.parametrize("query", ['"', "*", "  ", "-- :", "x" * 201, "a\nb"])
def test_a_query_without_words_or_too_long_is_refused(query):
    with pytest.raises(ValidationError):
        SearchDocsArgs(query=query)


def test_a_changed_spec_is_refused(tmp_path):
    loaded = scenario(tmp_path)
    record = loaded.records["clocks.md"]
    with open(record.path, "r+b") as handle:  # same size, same inode; mtime put back
        handle.write(b"# Clucks")
    os.utime(record.path, ns=(record.mtime_ns, record.mtime_ns))
    with reading(None) as session, pytest.raises(RecordRefusal) as refused:
        search(loaded, "clk_en")
        session.verify()
    assert refused.value.code == "record_changed"


def test_no_spec_approved_is_one_line(tmp_path):
    loaded = scenario(tmp_path, specs=False)
    with pytest.raises(RecordRefusal) as refused:
        every_record(loaded, "spec", "searchdocs")
    assert refused.value.code == "unapproved_record"
    assert "\n" not in refused.value.detail and "no spec record" in refused.value.detail
    excerpt = searchdocs.run(SearchDocsArgs(query="clk_en"), {})
    assert excerpt.summary == "no spec is approved: nothing to search" and not excerpt.lines


def test_no_citation_of_a_candidate_line_resolves(tmp_path):
    excerpt = search(scenario(tmp_path), "clk_en")
    item = {
        "ref": "E3",
        "tool": "searchdocs",
        "excerpt": [{"line": line.number, "text": line.text} for line in excerpt.lines],
    }
    cited = f"E3:L{excerpt.lines[1].number}"
    assert citable_lines(item) == [] and shown_commits(item) == []
    [bound] = bind_lines([{"statement": "s", "refs": ["E3", cited]}], {"E3": citable_lines(item)})
    assert bound["refs"] == ["E3"] and bound["unresolved"] == [cited]


def test_searchdocs_reads_every_spec_and_is_shown_only_with_a_pdf_spec(tmp_path):
    spec = tools_of("triage")["searchdocs"]
    assert spec.every_record == "spec" and spec.record_fields == ()
    assert PROFILE_TOOLS["triage"][-1] == "searchdocs"
    grant = scenario(tmp_path).model_dump(mode="json")
    assert "searchdocs" in [entry["name"] for entry in _catalog(grant)]
    del grant["records"]["manual.pdf"]
    assert "searchdocs" not in [entry["name"] for entry in _catalog(grant)]


def test_the_docs_walkthrough_shows_what_the_tool_gives(tmp_path):
    page = (Path(__file__).resolve().parents[3] / "docs" / "searchdocs.md").read_text()
    block = page.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    excerpt = search(scenario(tmp_path), "clk_en enable", limit=3)
    assert block[1:] == [
        excerpt.summary,
        *(f"L{line.number:<5} {line.text}" for line in excerpt.lines),
    ]


def test_an_unreadable_pdf_and_a_page_without_text_are_unknowns(tmp_path):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nnot a pdf at all clk_en\n")
    (tmp_path / "scan.pdf").write_bytes(make_pdf([["clk_en here"], []]))
    manifest = specs_manifest(tmp_path / "u.toml", "broken.pdf", "scan.pdf")
    excerpt = search(load_scenario(manifest), "clk_en")
    assert candidates(excerpt) == [("scan.pdf", "page 1")]
    assert [u.split(":")[0] for u in excerpt.unknowns] == ["broken.pdf", "scan.pdf pages 2"]


def specs_manifest(manifest: Path, *names: str) -> Path:
    """A triage manifest approving each of `names` (beside it) as a `spec`, its id its name."""
    manifest.write_text(
        f'id = "{manifest.stem.upper()}"\nprofile = "triage"\n'
        + "".join(f'[[record]]\nid = "{name}"\nkind = "spec"\npath = "{name}"\n' for name in names)
    )
    return manifest
