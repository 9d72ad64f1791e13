"""Citations are navigation, not a gate on the words they annotate.

A stop's statements keep their text whatever they cite: each keeps the refs the run has, and a ref
it does not have is listed as `unresolved` beside them, so one bad citation never takes the other
statements, or the statement's good citations, with it (a failed binding used to suppress usable
answer text). The guard still records the bad citation as an `unknown_reference` refusal.

A citation may name the line a reader should open: `E1:L23`, or a range `E1:L20-L25`. It resolves
when the item shows that line (for a range, any line of it); otherwise it is `unresolved` too — a
citation says where to look, it certifies nothing (`bind_lines`, at the handover, where the
excerpts are).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Container, Iterable, Mapping
from typing import Any

from contract.codes import RECOLLECTION
from guards.action import Hypothesis

FROM_MEMORY = "from memory, not observed in this run"


CITATION = re.compile(r"([EHM][1-9][0-9]{0,3})(?::L([1-9][0-9]{0,8})(?:-L?([1-9][0-9]{0,8}))?)?")


def base_ref(citation: str) -> str:
    """The item a citation names (`E1` for `E1:L23`)."""
    return citation.split(":", 1)[0]


def cited_lines(citation: str) -> tuple[int, int] | None:
    """The first and last line a citation names, or None for a whole item."""
    found = CITATION.fullmatch(citation)
    if found is None or found.group(2) is None:
        return None
    first = int(found.group(2))
    return first, int(found.group(3) or first)


def first_shown(citation: str, shown: Collection[int]) -> int | None:
    """The first line of the citation's lines that the item shows, if any."""
    lines = cited_lines(citation)
    if lines is None:
        return None
    first, last = min(lines), max(lines)
    return min((line for line in shown if first <= line <= last), default=None)


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
    hypotheses: Iterable[Mapping[str, Any]], shown: Mapping[str, Collection[int]]
) -> list[dict[str, Any]]:
    """Each statement with every line citation its item does not show (`shown`: ref → the line
    numbers its excerpt holds) moved from `refs` to `unresolved`."""
    bound = []
    for hypothesis in hypotheses:
        refs = list(hypothesis.get("refs", ()))
        missing = [
            ref
            for ref in refs
            if cited_lines(ref) and first_shown(ref, shown.get(base_ref(ref), ())) is None
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
