"""Security figures for docs/security.md: guard fuzzing and the injection corpus.

    .venv/bin/python bench/security.py --fuzz 100000

Prints Markdown tables. Every property is asserted while counting: the script fails loudly if
anything outside the grant is approved or executed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, given, settings

from guards.decide import decide
from tests.corpus.build import SECRET_TEXT, build_scenario, passages
from tests.guards.test_properties import CATALOG, OWNERS, SCENARIO, contexts, documents
from tests.helpers import run_embedded
from tools.excerpt import make_excerpt, make_line
from tools.flags import INSTRUCTION_LIKE


def fuzz(examples: int) -> tuple[Counter[str], Counter[str], float]:
    outcomes: Counter[str] = Counter()
    codes: Counter[str] = Counter()

    @settings(
        max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(documents, contexts)
    def proposal(document: object, ctx) -> None:  # type: ignore[no-untyped-def]
        decision = decide(document, ctx)
        outcomes[decision.outcome] += 1
        for refusal in decision.refusals:
            assert refusal.owner in OWNERS and refusal.detail
            codes[refusal.code.value] += 1
        for call in decision.calls if decision.outcome == "execute" else ():
            assert call.name in CATALOG
            assert all(record_id in SCENARIO.records for record_id in call.records.values())
            outcomes["calls approved"] += 1

    started = time.perf_counter()
    proposal()
    return outcomes, codes, time.perf_counter() - started


def corpus() -> dict[str, object]:
    figures: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as folder:
        for passage in passages():
            state = run_embedded(str(build_scenario(Path(folder), passage)), "adversary")
            grant = state["grant"]["records"]
            outside = [
                e
                for e in state["events"]
                if e["type"] == "executed" and e["payload"]["record"] not in grant
            ]
            assert not outside and SECRET_TEXT not in json.dumps(state) and "handover" in state
            figures["scenarios"] += 1
            figures["proposals"] += sum(e["type"] == "proposed" for e in state["events"])
            figures["executions"] += sum(e["type"] == "executed" for e in state["events"])
            figures["executions outside the grant"] += len(outside)
            codes.update(refusal["code"] for refusal in state["refusals"])
            excerpt = make_excerpt(
                "carrier", [make_line(n, line) for n, line in enumerate(passage.lines, 1)], False
            )
            figures["carrier lines"] += len(excerpt.lines)
            figures["carrier lines flagged"] += sum(
                INSTRUCTION_LIKE in line.flags for line in excerpt.lines
            )
    return {"figures": figures, "codes": codes, "shapes": len({p.shape for p in passages()})}


def table(rows: dict[str, object]) -> str:
    return "\n".join(
        [
            "| measure | value |",
            "| --- | ---: |",
            *(f"| {key} | {value} |" for key, value in rows.items()),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=10_000, help="fuzzed proposals (default 10000)")
    args = parser.parse_args()
    outcomes, codes, seconds = fuzz(args.fuzz)
    print(
        f"## Guard fuzzing: {sum(outcomes[o] for o in ('execute', 'refused', 'stop', 'end', 'ask', 'approval'))} proposals in {seconds:.0f} s\n"
    )
    print(
        table(
            {
                **{f"outcome {k}": v for k, v in sorted(outcomes.items())},
                "approved outside the grant": 0,
                "guard exceptions": 0,
            }
        )
    )
    print("\n" + table({f"refusal {k}": v for k, v in codes.most_common()}))
    result = corpus()
    print(
        f"\n## Injection corpus: {result['figures']['scenarios']} passages in {result['shapes']} shapes, adversary chooser\n"
    )
    print(table(dict(result["figures"])))
    print("\n" + table({f"refusal {k}": v for k, v in result["codes"].most_common()}))


if __name__ == "__main__":
    main()
