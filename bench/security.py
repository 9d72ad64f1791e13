"""Security figures for docs/security.md: guard fuzzing and the injection corpus (triage and STA).

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
from guards.decision import refusals_of
from tests.corpus.build import BUILDERS, SECRET_TEXT, Passage, passages
from tests.guards.test_properties import CATALOG, OWNERS, SCENARIO, contexts, documents
from tests.helpers import run_embedded
from tools.catalog import tools_of
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
        for refusal in refusals_of(decision):
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
    """Every passage in every profile's scenario, against the adversary, figures per profile."""
    figures = {profile: Counter[str]() for profile in BUILDERS}
    codes = {profile: Counter[str]() for profile in BUILDERS}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for profile, build in BUILDERS.items():
            for passage in passages():
                state = run_embedded(str(build(Path(folder), passage)), "adversary")
                count(state, passage, figures[profile], codes[profile])
    return {
        "figures": figures,
        "codes": codes,
        "shapes": len({p.shape for p in passages()}),
        "passages": len(passages()),
        "seconds": time.perf_counter() - started,
    }


def count(state: dict, passage: Passage, figures: Counter[str], codes: Counter[str]) -> None:
    """Add one run's figures, asserting that nothing outside the grant ran or leaked."""
    grant, catalog = state["grant"]["records"], tools_of(state["grant"]["profile"])
    executed = [e for e in state["events"] if e["type"] == "executed"]
    read = {s["record"] for item in state["evidence"] for s in item.get("sources", [])}
    outside = [
        e
        for e in executed
        if e["payload"]["record"] not in grant or e["actor"].removeprefix("tool:") not in catalog
    ]
    assert not outside and read <= set(grant) and "handover" in state
    assert SECRET_TEXT not in json.dumps(state)
    for refusal in state["refusals"]:
        assert refusal["owner"] in {"guard", *(f"tool:{name}" for name in catalog)}
    figures["scenarios"] += 1
    figures["proposals"] += sum(e["type"] == "proposed" for e in state["events"])
    figures["executions"] += len(executed)
    figures["executions outside the grant"] += len(outside)
    codes.update(refusal["code"] for refusal in state["refusals"])
    excerpt = make_excerpt(
        "carrier", [make_line(n, line) for n, line in enumerate(passage.lines, 1)], False
    )
    figures["carrier lines"] += len(excerpt.lines)
    figures["carrier lines flagged"] += sum(
        INSTRUCTION_LIKE in line.flags for line in excerpt.lines
    )
    quoted = quoted_carriers(state, passage)
    figures["evidence lines quoting a carrier"] += len(quoted)
    figures["… of them flagged"] += sum(INSTRUCTION_LIKE in line["flags"] for line in quoted)


def quoted_carriers(state: dict, passage: Passage) -> list[dict]:
    carriers = {line.decode("utf-8", "replace").rstrip("\r")[:60] for line in passage.lines}
    return [
        line
        for item in state["evidence"]
        for line in item["excerpt"]
        if any(carrier and carrier in line["text"] for carrier in carriers)
    ]


def table(rows: dict[str, object]) -> str:
    return "\n".join(
        [
            "| measure | value |",
            "| --- | ---: |",
            *(f"| {key} | {value} |" for key, value in rows.items()),
        ]
    )


def grid(columns: dict[str, Counter[str]], keys: list[str], label: str = "") -> str:
    """One column per profile, one row per key."""
    names = list(columns)
    return "\n".join(
        [
            "| measure | " + " | ".join(names) + " |",
            "| --- |" + " ---: |" * len(names),
            *(
                f"| {label}{key} | " + " | ".join(str(columns[name][key]) for name in names) + " |"
                for key in keys
            ),
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
        f"\n## Injection corpus: {result['passages']} passages in {result['shapes']} shapes, "
        f"in {' and '.join(BUILDERS)} scenarios, adversary chooser ({result['seconds']:.0f} s)\n"
    )
    print(grid(result["figures"], list(next(iter(result["figures"].values())))))
    totals = sum(result["codes"].values(), Counter[str]())
    print("\n" + grid(result["codes"], [code for code, _ in totals.most_common()], "refusal "))


if __name__ == "__main__":
    main()
