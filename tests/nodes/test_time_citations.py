"""Citations of a time: `E4:t=265ns` names an instant a `waveform` item shows (a value at it or a
change then); it stays among the statement's refs when the item shows that instant, in whatever
unit it is written, and is `unresolved` otherwise, or when the item is another tool's."""

from __future__ import annotations

import pytest

from guards.action import parse_action
from guards.citations import bind_lines, shown_times
from guards.refusals import Refusal
from tests.helpers import stop

ITEM = {
    "ref": "E4",
    "tool": "waveform",
    "excerpt": [
        {"line": 1, "text": "t=265000ps top.dut.clk_en = 0 (at)"},
        {"line": 2, "text": "t=285000ps top.dut.clk_en -> 1"},
    ],
}


@pytest.mark.parametrize("ref", ["E4:t=265ns", "E4:t=265000ps", "E4:t=0.285us", "E4:t=1s"])
def test_a_statement_may_cite_a_time(ref):
    assert not isinstance(
        parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}])), Refusal
    )


@pytest.mark.parametrize(
    "ref", ["M3:t=265ns", "E4:t=265", "E4:t=265 ns", "E4:t=-5ns", "E4:t=265ks", "E4:t=ns"]
)
def test_a_malformed_time_citation_is_a_malformed_action(ref):
    refused = parse_action(stop(hypotheses=[{"statement": "s", "refs": [ref]}]))
    assert isinstance(refused, Refusal) and refused.code == "malformed_action"


def test_a_time_citation_resolves_where_its_item_shows_the_instant():
    refs = ["E4:t=265ns", "E4:t=0.285us", "E4:t=265000000fs", "E4:t=275ns", "E4:L2"]
    [bound] = bind_lines(
        [{"statement": "s", "refs": refs}],
        {"E4": [("", 1), ("", 2)]},
        {},
        {"E4": shown_times(ITEM)},
    )
    assert bound["refs"] == ["E4:t=265ns", "E4:t=0.285us", "E4:t=265000000fs", "E4:L2"]
    assert bound["unresolved"] == ["E4:t=275ns"]


def test_a_time_citation_of_another_tools_item_is_unresolved():
    """A log line may start `t=…` too: only a waveform item's instants are citable as times."""
    log_item = {**ITEM, "tool": "searchlogs"}
    [bound] = bind_lines(
        [{"statement": "s", "refs": ["E4:t=265ns"]}], {}, {}, {"E4": shown_times(log_item)}
    )
    assert bound["refs"] == [] and bound["unresolved"] == ["E4:t=265ns"]
