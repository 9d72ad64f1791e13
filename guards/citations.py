"""Citations are navigation, not a gate on the words they annotate.

A stop's statements keep their text whatever they cite: each keeps the refs the run has, and a ref
it does not have is listed as `unresolved` beside them, so one bad citation never takes the other
statements, or the statement's good citations, with it (a failed binding used to suppress usable
answer text). The guard still records the bad citation as an `unknown_reference` refusal.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any

from contract.codes import RECOLLECTION
from guards.action import Hypothesis

FROM_MEMORY = "from memory, not observed in this run"


def unresolved_refs(hypotheses: Iterable[Hypothesis], known: Container[str]) -> list[str]:
    """Every cited ref the run does not have, sorted, once each."""
    return sorted({ref for hypothesis in hypotheses for ref in hypothesis.refs if ref not in known})


def bound_citations(
    hypotheses: Iterable[Hypothesis], known: Container[str]
) -> list[dict[str, Any]]:
    """Each statement with its resolvable refs (`refs`, in the order cited) and, only where some
    are missing, the rest under `unresolved`; one resting on recalled notes alone (`M…`) is
    marked `from_memory`: nothing observed in this run supports it."""
    bound = []
    for hypothesis in hypotheses:
        found = [ref for ref in hypothesis.refs if ref in known]
        missing = [ref for ref in hypothesis.refs if ref not in known]
        remembered = bool(found) and all(ref.startswith(RECOLLECTION) for ref in found)
        bound.append({"statement": hypothesis.statement, "refs": found}
                     | ({"unresolved": missing} if missing else {})
                     | ({"from_memory": True} if remembered else {}))  # fmt: skip
    return bound
