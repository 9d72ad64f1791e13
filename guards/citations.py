"""Citations are navigation, not a gate on the words they annotate.

A stop's statements keep their text whatever they cite: each keeps the refs the run has, and a ref
it does not have is listed as `unresolved` beside them, so one bad citation never takes the other
statements, or the statement's good citations, with it (a failed binding used to suppress usable
answer text). The guard still records the bad citation as an `unknown_reference` refusal.

A citation may name the line a reader should open: `E1:L23`, or a range `E1:L20-L25`; of a family
tool's item, whose excerpt quotes lines of several members (two may share a number), the member
too: `E1:runs/N7/a.log:L846`. It resolves when the item shows that line (for a range, any line of
it; of the member named, if one is); a commit citation, `E5:c1a2b3c4`, when the item lists that
commit (`changes`: a line starting with its id); otherwise it is `unresolved` too — a citation says where to
look, it certifies nothing (`bind_lines`, at the handover, where the excerpts are). A PDF's pages
(`readpages`) are quoted as a family's members are, `p14:3: text`: `E2:p14:L3` is line 3 of page
14, and `E2:p14` the page, which resolves when the item shows a line of it. A search's
candidates (`searchdocs`) were not read: no citation of their lines, pages or commits resolves
(`citable_lines`); the item whole, what the search found, may be cited. A time, `E4:t=265ns`,
resolves when a `waveform` item shows a value at that instant or a change then (its lines start
`t=265000ps`; the units may differ, the instant must be the same).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from contract.codes import RECOLLECTION
from guards.action import CITATION, Hypothesis, is_citation
from tools.excerpt import quoted_member
from tools.specs import CANDIDATE_TOOLS, PAGED_TOOLS
from tools.wave.args import INSTANT, seconds

FROM_MEMORY = "from memory, not observed in this run"

_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_SHOWN_TIME = re.compile(rf"t=({INSTANT}) ")

Spot = tuple[str, int]
"""A line an item shows, as a citation finds it: (member, number); the member is empty for a
line of a single record."""


def base_ref(citation: str) -> str:
    """The item a citation names (`E1` for `E1:L23`)."""
    return citation.split(":", 1)[0]


def cited_lines(citation: str) -> tuple[int, int] | None:
    """The first and last line a citation names, or None for a whole item."""
    found = CITATION.fullmatch(citation)
    if found is None or found["first"] is None:
        return None
    first = int(found["first"])
    return first, int(found["last"] or first)


def cited_commit(citation: str) -> str | None:
    """The commit id (or its prefix) a citation names, or None."""
    found = CITATION.fullmatch(citation)
    return found["commit"] if found else None


def shown_commits(item: Mapping[str, Any]) -> list[str]:
    """The commit ids an item's lines start with (`changes`: `c1a2b3c4 2026-… author: subject`);
    none of a search's candidates."""
    if item.get("tool") in CANDIDATE_TOOLS:
        return []
    return [
        first
        for line in item.get("excerpt") or ()
        if (first := str(line["text"]).split(" ", 1)[0]) and _COMMIT.fullmatch(first)
    ]


def cited_time(citation: str) -> Fraction | None:
    """The instant (in seconds) a citation names, or None."""
    found = CITATION.fullmatch(citation)
    return seconds(found["time"]) if found and found["time"] else None


def shown_times(item: Mapping[str, Any]) -> list[Fraction]:
    """The instants (in seconds) a `waveform` item's lines are at; none of another tool's."""
    if item.get("tool") != "waveform":
        return []
    return [
        seconds(found[1])
        for line in item.get("excerpt") or ()
        if (found := _SHOWN_TIME.match(str(line["text"])))
    ]


def _commit_shown(citation: str, commits: Sequence[str]) -> bool:
    cited = cited_commit(citation) or ""
    return any(commit.startswith(cited) or cited.startswith(commit) for commit in commits)


def line_citation(ref: str, line: int, member: str = "") -> str:
    """The citation of one line an item shows: with its member when the item quotes several
    (and the member's name can be written in a citation), else `E1:L23`."""
    qualified = f"{ref}:{member}:L{line}"
    return qualified if member and is_citation(qualified) else f"{ref}:L{line}"


def shown_lines(item: Mapping[str, Any]) -> list[Spot]:
    """The lines an item's excerpt shows, in its order: a family tool's (a PDF's, a search's) with
    the member (page, candidate) each quotes, another's with none; what their anchors are made of."""
    quoting = PAGED_TOOLS | CANDIDATE_TOOLS  # lines written `#1 spec.md:12: text`: one per place
    family = bool(item.get("family")) or item.get("tool") in quoting
    return [
        (quoted_member(str(line["text"]), line["line"]) if family else "", line["line"])
        for line in item.get("excerpt") or ()
    ]


def citable_lines(item: Mapping[str, Any]) -> list[Spot]:
    """The lines a citation of the item may name: those it shows, none of a search's candidates
    (they were found, not read: a reader opens them with readspec or readpages)."""
    return [] if item.get("tool") in CANDIDATE_TOOLS else shown_lines(item)


def first_shown(citation: str, shown: Sequence[Spot]) -> Spot | None:
    """The first of the citation's lines that the item shows (the lowest number, then the first
    in the item's order), of the member it names if it names one; None if none is shown."""
    found = CITATION.fullmatch(citation)
    if found is not None and found["page"] is not None:
        lines: tuple[int, int] | None = (1, 1 << 40)
        member = found["page"]
    else:
        lines = cited_lines(citation)
        member = found["member"] if found else None
    if lines is None:
        return None
    first, last = min(lines), max(lines)
    spots = [spot for spot in shown if first <= spot[1] <= last and member in (None, spot[0])]
    return min(spots, key=lambda spot: spot[1], default=None)


def names_spot(citation: str) -> bool:
    """Whether the citation names lines or a page of its item, not the item whole."""
    found = CITATION.fullmatch(citation)
    return found is not None and (found["first"] or found["page"]) is not None


def unresolved_refs(hypotheses: Iterable[Hypothesis], known: Container[str]) -> list[str]:
    """Every cited ref the run does not have, sorted, once each."""
    return sorted(
        {ref for hypothesis in hypotheses for ref in hypothesis.refs if base_ref(ref) not in known}
    )


def bound_citations(
    hypotheses: Iterable[Hypothesis], known: Container[str]
) -> list[dict[str, Any]]:
    """Each statement with its resolvable refs (`refs`, in the order cited) and, only where some
    are missing, the rest under `unresolved`; one resting on recalled notes alone (`M…`) is
    marked `from_memory`: nothing observed in this run supports it."""
    bound = []
    for hypothesis in hypotheses:
        found = [ref for ref in hypothesis.refs if base_ref(ref) in known]
        missing = [ref for ref in hypothesis.refs if base_ref(ref) not in known]
        remembered = bool(found) and all(ref.startswith(RECOLLECTION) for ref in found)
        bound.append(
            {"statement": hypothesis.statement, "refs": found}
            | ({"unresolved": missing} if missing else {})
            | ({"from_memory": True} if remembered else {})
        )
    return bound


def bind_lines(
    hypotheses: Iterable[Mapping[str, Any]],
    shown: Mapping[str, Sequence[Spot]],
    commits: Mapping[str, Sequence[str]] | None = None,
    times: Mapping[str, Sequence[Fraction]] | None = None,
) -> list[dict[str, Any]]:
    """Each statement with every line citation its item does not show (`shown`: ref → the lines
    its excerpt holds, `shown_lines`), every commit citation whose item lists no such commit
    (`commits`: ref → `shown_commits`) and every time citation whose item shows nothing at that
    instant (`times`: ref → `shown_times`), moved from `refs` to `unresolved`."""
    bound = []
    for hypothesis in hypotheses:
        refs = list(hypothesis.get("refs", ()))
        missing = [
            ref
            for ref in refs
            if (names_spot(ref) and first_shown(ref, shown.get(base_ref(ref), ())) is None)
            or (
                cited_commit(ref) and not _commit_shown(ref, (commits or {}).get(base_ref(ref), ()))
            )
            or (
                (instant := cited_time(ref)) is not None
                and instant not in (times or {}).get(base_ref(ref), ())
            )
        ]
        if not missing:
            bound.append(dict(hypothesis))
            continue
        unresolved = [*hypothesis.get("unresolved", ()), *missing]
        bound.append(
            {
                **hypothesis,
                "refs": [ref for ref in refs if ref not in missing],
                "unresolved": unresolved,
            }
        )
    return bound
