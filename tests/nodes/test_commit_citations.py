"""Citations of a commit: `E5:c1a2b3c4` names a commit a `changes` item lists; it stays among the
statement's refs when the item lists that commit (by its short id, or a longer or shorter prefix of
the same commit) and is `unresolved` otherwise."""

from __future__ import annotations

import pytest

from guards.action import parse_action
from guards.citations import bind_lines, shown_commits
from guards.refusals import Refusal
from tests.helpers import stop

ITEM = {
    "ref": "E5",
    "excerpt": [
        {"line": 1, "text": "9aca5902 2026-12-02T09:30:00Z Grace: clkgate: hold clk_en low"},
        {"line": 2, "text": "  +1 -1 rtl/clkgate.sv"},
    ],
}


@pytest.mark.parametrize("ref", ["E5:9aca5902", "E5:9aca590", "E5:" + "9aca5902" + "ab" * 16])
def test_a_statement_may_cite_a_commit(ref):
    assert not isinstance(
        parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}])), Refusal
    )


@pytest.mark.parametrize("ref", ["M3:9aca5902", "E5:9aca59", "E5:9ACA5902", "E5:" + "a" * 41])
def test_a_malformed_commit_citation_is_a_malformed_action(ref):
    refused = parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}]))
    assert isinstance(refused, Refusal) and refused.code == "malformed_action"


def test_a_commit_citation_resolves_where_its_item_lists_the_commit():
    hypotheses = [{"statement": "s", "refs": ["E5:9aca5902", "E5:9aca590", "E5:1234567", "E5:L2"]}]
    [bound] = bind_lines(hypotheses, {"E5": [("", 1), ("", 2)]}, {"E5": shown_commits(ITEM)})
    assert bound["refs"] == ["E5:9aca5902", "E5:9aca590", "E5:L2"]
    assert bound["unresolved"] == ["E5:1234567"]
