"""Citations of a PDF's pages: `E2:p14` (a page) and `E2:p14:L3` (a line of it) are accepted, and
resolve when the readpages item shows that page or that line of it."""

import pytest

from graph.present.anchors import citation_anchors
from guards.action import parse_action
from guards.citations import bind_lines, shown_lines
from guards.refusals import Refusal
from tests.helpers import stop

ITEM = {
    "ref": "E2",
    "tool": "readpages",
    "excerpt": [
        {"line": 1, "text": "p14:1: Clock enable", "flags": []},
        {"line": 2, "text": "p14:2: asserted within 4 cycles", "flags": []},
        {"line": 1, "text": "p15:1: Reset release", "flags": []},
    ],
}


@pytest.mark.parametrize("ref", ["E2:p14", "E2:p14:L3", "E2:p1:L1-L2"])
def test_a_statement_may_cite_a_page_or_its_lines(ref):
    assert not isinstance(
        parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}])), Refusal
    )


@pytest.mark.parametrize("ref", ["E2:p0", "M1:p2", "E2:p", "E2:P14", "E2:p14:"])
def test_a_malformed_page_citation_is_a_malformed_action(ref):
    refused = parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}]))
    assert isinstance(refused, Refusal) and refused.code == "malformed_action"


def test_a_readpages_item_shows_each_line_with_its_page():
    assert shown_lines(ITEM) == [("p14", 1), ("p14", 2), ("p15", 1)]


def test_a_page_citation_resolves_when_its_item_shows_the_page_or_line():
    refs = ["E2:p14", "E2:p14:L2", "E2:p15:L1", "E2:p16", "E2:p15:L2", "E2:L1"]
    [bound] = bind_lines([{"statement": "s", "refs": refs}], {"E2": shown_lines(ITEM)})
    assert bound["refs"] == ["E2:p14", "E2:p14:L2", "E2:p15:L1", "E2:L1"]
    assert bound["unresolved"] == ["E2:p16", "E2:p15:L2"]


def test_a_page_citation_links_to_its_first_shown_line():
    handover = {
        "evidence": [ITEM],
        "hypotheses": [{"statement": "s", "refs": ["E2:p15", "E2:p14:L2", "E2:p9"]}],
    }
    assert citation_anchors(handover) == {
        "E2:p15": "e2-p15-l1",
        "E2:p14:L2": "e2-p14-l2",
        "E2:p9": "e2",
    }
