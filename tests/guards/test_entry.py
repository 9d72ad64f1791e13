"""Entry's routes for twenty questions over the built-in scenarios' cards (names only): direct
when a question asks what something means and names no record; research when it names a run,
test, file or report, or asks why something failed or got worse; ambiguous questions go to
research, with the reason saying so."""

import pytest

from guards.entry import decide_entry
from lab import builtin_manifests
from scenario.cards import Card, card_of, names_of

CARDS = tuple(card_of(path, scenario_id) for scenario_id, path in builtin_manifests().items())

QUESTIONS = [
    ("what does UVM_FATAL mean in our flow?", "direct", None),
    ("What is a reset synchronizer?", "direct", None),
    ("how do I read a UVM report summary?", "direct", None),
    ("Explain what TNS means.", "direct", None),
    ("how should we triage a nightly?", "direct", None),
    ("what are the RST requirements?", "direct", None),
    ("hello", "direct", None),
    ("define WNS", "direct", None),
    ("why did R43 fail?", "research", "R43"),
    ("Why did reset_smoke fail in R43?", "research", "R43"),
    ("why is setup_after.rpt worse than setup_before.rpt", "research", "STA1"),
    ("what got worse between setup_before and setup_after?", "research", "STA1"),
    ("which tests failed in R44?", "research", "R44"),
    ("why did irq_stress fail in the nightly history?", "research", "R44"),
    ("what does reset_controller.md say about RST-5?", "research", "R42"),
    ("why did reset_smoke fail last night?", "research", "R42"),
    ("what got worse in the setup timing report?", "research", "STA1"),
    ("which tests failed last night?", "research", "R42"),
    ("why is slack negative?", "research", "STA1"),
    ("fifo_basic", "research", "R42"),
]


@pytest.mark.parametrize(("question", "route", "scenario"), QUESTIONS)
def test_twenty_questions_are_routed(question, route, scenario):
    decision = decide_entry(question, CARDS)
    assert (decision.route, decision.scenario) == (route, scenario), decision.reason
    if route == "research":
        assert decision.goal == question and decision.profile is not None


def test_an_ambiguous_question_goes_to_research_and_says_so():
    named = decide_entry("why did reset_smoke fail last night?", CARDS)
    assert "ambiguous: also in" in named.reason and "R43" in named.reason
    unnamed = decide_entry("which tests failed last night?", CARDS)
    assert unnamed.reason.startswith("it asks 'failed' but names no record of any scenario")
    assert "ambiguous: chose R42 (triage)" in unnamed.reason


def test_overrides_are_said_in_the_reason():
    assert decide_entry("why did R43 fail?", CARDS, "direct").reason == (
        "asked for a direct answer (--direct)"
    )
    researched = decide_entry("what does UVM_FATAL mean?", CARDS, "research")
    assert researched.route == "research" and researched.reason.startswith(
        "asked for research (--research)"
    )


def test_research_is_only_ever_a_given_card():
    only = (Card("mine.toml", "triage", "", names_of("MINE", ["logs/t.log"]), 1),)
    decision = decide_entry("why did R43 fail?", only)  # R43 is not a candidate here
    assert decision.scenario in (None, "mine.toml")
    assert decide_entry("why did t fail?", only).scenario == "mine.toml"
    assert decide_entry("why did R43 fail?", ()).route == "direct"


def test_names_are_record_names_never_contents():
    names = names_of("R42", ["lab/runs/R42/reset_smoke.log", "runs/*.log"])
    assert {"r42", "reset_smoke", "reset_smoke.log"} <= names
    assert not any("*" in name for name in names) and "lab" not in names
