"""Citations to the line: a statement may cite `E1:L23` or `E1:L20-L25`; the handover links to that
line; a cited line its item does not show is marked unresolved (navigation, not certification); the
lab's choosers cite lines their items show."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.present.render import handover_markdown
from guards.action import parse_action
from guards.citations import bind_lines
from guards.refusals import Refusal
from lab import LAB_DIR
from tests.cli_process import warrant
from tests.helpers import call, stop

R42_LOG = "lab/runs/R42/reset_smoke.log"


@pytest.mark.parametrize("ref", ["E1:L23", "E12:L1-L5", "E1:L20-25", "H2:L1", "M3", "E7"])
def test_a_statement_may_cite_an_item_or_its_lines(ref):
    document = parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}]))
    assert not isinstance(document, Refusal)


@pytest.mark.parametrize(
    "ref", ["E1:23", "E1:L0", "E0:L1", "M1:L2", "E1:L2-", "E1:L", "e1:l2", "E1:L2:L3"]
)
def test_a_malformed_line_citation_is_a_malformed_action(ref):
    refused = parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}]))
    assert isinstance(refused, Refusal) and refused.code == "malformed_action"


def _reference_resolves(first: int, last: int, shown: set[int]) -> bool:
    """Independently: a line citation resolves when some line of it is shown."""
    return any(line in shown for line in range(min(first, last), max(first, last) + 1))


@given(
    shown=st.sets(st.integers(1, 60), max_size=20),
    first=st.integers(1, 70),
    span=st.integers(0, 8),
)
def test_a_line_citation_resolves_exactly_when_its_item_shows_one_of_its_lines(shown, first, span):
    last = first + span
    ref = f"E1:L{first}" if span == 0 else f"E1:L{first}-L{last}"
    [bound] = bind_lines(
        [{"statement": "s", "refs": [ref, "E2"]}],
        {"E1": [("", line) for line in sorted(shown)], "E2": []},
    )
    if _reference_resolves(first, last, shown):
        assert bound["refs"] == [ref, "E2"] and "unresolved" not in bound
    else:
        assert bound["refs"] == ["E2"] and bound["unresolved"] == [ref]


@given(
    shown=st.lists(st.tuples(st.sampled_from(["a.log", "b.log"]), st.integers(1, 30)), max_size=12),
    member=st.sampled_from(["a.log", "b.log"]),
    first=st.integers(1, 35),
    span=st.integers(0, 4),
)
def test_a_members_line_citation_resolves_exactly_when_its_item_shows_that_members_line(
    shown, member, first, span
):
    """A family's item quotes several members' lines: `E1:a.log:L5` resolves on a.log's line 5,
    never on b.log's."""
    last = first + span
    ref = f"E1:{member}:L{first}" if span == 0 else f"E1:{member}:L{first}-L{last}"
    [bound] = bind_lines([{"statement": "s", "refs": [ref]}], {"E1": shown})
    own = {line for name, line in shown if name == member}
    if _reference_resolves(first, last, own):
        assert bound["refs"] == [ref] and "unresolved" not in bound
    else:
        assert bound["refs"] == [] and bound["unresolved"] == [ref]


def _links_and_anchors(markdown: str) -> tuple[list[str], set[str]]:
    return re.findall(r"\]\(#([^)]+)\)", markdown), set(
        re.findall(r'<a id="([^"]+)"></a>', markdown)
    )


def test_every_link_of_a_handover_opens_an_anchor_and_a_cited_line_opens_that_line(
    tmp_path, action_file
):
    chooser = action_file(
        [
            call("c1", "searchlogs", path=R42_LOG, query="RST_CHK", limit=7),
            stop(
                hypotheses=[
                    {"statement": "the checker's error", "refs": ["E1:L22"]},
                    {"statement": "late by two cycles", "refs": ["E1:L22-L23", "E1"]},
                    {"statement": "a line never shown", "refs": ["E1:L30"]},
                    {"statement": "no such item", "refs": ["E9:L1"]},
                ]
            ),
        ]
    )
    result = warrant(
        "run",
        "R42",
        "--chooser",
        chooser,
        "--db",
        str(tmp_path / "w.sqlite"),
        "--json",
        "-q",
        cwd=tmp_path,
    )
    handover = json.loads(result.stdout)
    hypotheses = [(h["refs"], h.get("unresolved", [])) for h in handover["hypotheses"]]
    assert hypotheses == [
        (["E1:L22"], []),
        (["E1:L22-L23", "E1"], []),
        ([], ["E1:L30"]),
        ([], ["E9:L1"]),
    ]
    markdown = handover_markdown(handover)
    links, anchors = _links_and_anchors(markdown)
    assert links and set(links) <= anchors
    assert "[E1:L22](#e1-l22)" in markdown and "[E1:L22-L23](#e1-l22)" in markdown
    # The anchor stands right before the cited line's block.
    after = markdown.split('<a id="e1-l22"></a>', 1)[1]
    assert after.lstrip().startswith("```text\nL22 ")
    assert "(E1:L30: unresolved, a line its item does not show)" in markdown
    assert "(E9:L1: unresolved, no such evidence in this run)" in markdown
    # The raw log line 22 is what the anchor opens (checked against the file, not the tool).
    raw = (LAB_DIR / "runs" / "R42" / "reset_smoke.log").read_text().splitlines()[21]
    assert raw in after.split("```", 2)[1]


CHOOSERS = sorted(
    path.name
    for path in (LAB_DIR / "choosers").glob("r42_*.jsonl")
    if "adversarial" not in path.name
)


@pytest.mark.parametrize("name", CHOOSERS)
def test_the_labs_choosers_cite_only_lines_their_items_show(name, tmp_path):
    db = str(tmp_path / "w.sqlite")
    chooser = f"file:{LAB_DIR / 'choosers' / name}"
    first = warrant(
        "run",
        "R42",
        "--chooser",
        chooser,
        "--db",
        db,
        "--thread",
        "T",
        "--json",
        "-q",
        cwd=tmp_path,
    )
    result = first
    while result.returncode == 3:  # a person is asked: answer, as a tester would
        result = warrant(
            "resume", "T", "--answer", "yes, in R42", "--db", db, "--json", "-q", cwd=tmp_path
        )
    assert result.returncode == 0, result.stderr
    handover = json.loads(result.stdout)
    unshown = [ref for h in handover["hypotheses"] for ref in h.get("unresolved", ()) if ":" in ref]
    assert unshown == [], handover["hypotheses"]
