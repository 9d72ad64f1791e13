"""Entry: a question in, a route out (seed 001 §02: "Entry chooses direct explanation or
evidence-backed research based on required work … a directory describing available sources is not
evidence that those sources were read").

Pure: it is given the question and bounded authorized context — each candidate scenario's id,
profile, goal and the names of its records (never their contents) — and decides:
- **research** when the question names what only records can settle (a run, a test, a file, a
  report of a candidate scenario), or asks why something failed or got worse: a scenario, its
  profile and a goal for a governed run;
- **direct** when it asks what something means or how to do something and names no record: an
  answer from approved reference material only (skills, specifications), read by the caller.
An ambiguous question goes to research, with the reason. Names are matched as whole words,
case-insensitively; nothing here opens a file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scenario.cards import Card

Route = Literal["direct", "research"]
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]|[A-Za-z0-9]")
RESEARCH_CUES = (
    r"\bwhy\b",
    r"\bfail(?:s|ed|ing|ure|ures)?\b",
    r"\bworse\b",
    r"\bregress(?:ed|ion|ions)?\b",
    r"\blast night\b",
    r"\bovernight\b",
    r"\bnightly\b",
    r"\bwhat changed\b",
    r"\bwhich tests?\b",
    r"\bslack\b",
    r"\bviolat(?:ed|ion|ions)\b",
    r"\btiming\b",
)
DIRECT_CUES = (
    r"\bwhat (?:does|do|is|are)\b.*\bmean",
    r"\bmeaning of\b",
    r"\bwhat is an?\b",
    r"\bwhat are\b",
    r"\bhow (?:do|should|can) (?:i|we|you)\b",
    r"\bhow to\b",
    r"\bexplain\b",
    r"\bdefine\b",
)
STA_CUES = (
    r"\bslack\b",
    r"\btiming\b",
    r"\bsta\b",
    r"\bsetup\b",
    r"\bhold\b",
    r"\bwns\b",
    r"\btns\b",
)
IDENTIFIER = re.compile(r"[0-9_.]|[A-Z]{2}")
"""A word that reads as a name (R43, reset_smoke, setup_after.rpt), not a dictionary word."""


@dataclass(frozen=True)
class EntryDecision:
    route: Route
    reason: str
    scenario: str | None = None
    """For research: the candidate's id (one of the cards given, never another)."""
    profile: str | None = None
    goal: str | None = None
    matched: tuple[str, ...] = ()


def decide_entry(
    question: str, cards: Sequence[Card], forced: Route | None = None
) -> EntryDecision:
    """The route for `question` among `cards`; `forced` (`--research`, `--direct`) overrides the
    rules, and is said in the reason."""
    text = question.lower()
    research = _cues(text, RESEARCH_CUES)
    direct = _cues(text, DIRECT_CUES)
    found = WORD.findall(question)
    if direct:  # "how should we triage a nightly?": a method; only identifiers name records
        found = [word for word in found if IDENTIFIER.search(word)]
    words = {word.lower() for word in found}
    scored = sorted(
        ((len(card.names & words), card) for card in cards),
        key=lambda pair: (-pair[0], pair[1].id),
    )
    named = [(score, card) for score, card in scored if score]
    if forced == "direct":
        return EntryDecision("direct", "asked for a direct answer (--direct)")
    if named:
        best = _best(named, text)
        matched = tuple(sorted(best.names & words))
        tied = [card.id for score, card in named if score == named[0][0] and card is not best]
        reason = f"the question names {', '.join(matched)}, which {best.id}'s records can settle"
        if tied:
            reason += f"; ambiguous: also in {', '.join(tied[:5])} (name one with --in)"
        if forced == "research":
            reason = "asked for research (--research); " + reason
        return EntryDecision("research", reason, best.id, best.profile, question, matched)
    if forced == "research" or (research and not direct):
        if not cards:
            return EntryDecision("direct", "no scenario to research is available to you")
        best = _by_profile(cards, text)
        why = "asked for research (--research)" if forced == "research" else f"it asks {research}"
        reason = f"{why} but names no record of any scenario; ambiguous: chose {best.id} ({best.profile})"
        return EntryDecision("research", reason, best.id, best.profile, question)
    if direct:
        return EntryDecision("direct", f"it asks {direct} and names no run, test, file or report")
    return EntryDecision(
        "direct", "it names no run, test, file or report and asks for nothing that needs records"
    )


def _cues(text: str, patterns: Sequence[str]) -> str:
    """The first cue found, as the words it matched; empty if none."""
    for pattern in patterns:
        found = re.search(pattern, text)
        if found:
            return repr(found.group(0))
    return ""


def _best(named: Sequence[tuple[int, Card]], text: str) -> Card:
    """The card naming the most of the question; among ties, the profile the question's words
    point to, then the id in order."""
    top = named[0][0]
    tied = [card for score, card in named if score == top]
    return _by_profile(tied, text)


def _by_profile(cards: Sequence[Card], text: str) -> Card:
    wanted = "sta" if _cues(text, STA_CUES) else "triage"
    return next((card for card in cards if card.profile == wanted), cards[0])
