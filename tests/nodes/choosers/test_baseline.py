"""The triage baseline's plan over receipts written here in the triage receipt's shape (issue 53,
item 8): follow-ups wait for every family, rank buckets over the whole nightly, and a stop that
cannot state every bucket says how many it left out."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from nodes.choosers.baseline import next_action


def receipt(ref: str, family: str, sizes: list[int]) -> dict[str, Any]:
    """A triage receipt of `family` whose buckets have `sizes` failures (largest first), each one
    test per failure, each bucket's example at line 10 of its first test's log."""
    folder = family.rsplit("/", 1)[0]
    parts, lines = [], []
    for index, size in enumerate(sizes, 1):
        tests = [f"{ref.lower()}_b{index}_t{n}" for n in range(size)]
        member = f"{folder}/{tests[0]}.log"
        parts.append(
            f"B{index} ×{size} [{', '.join(tests)}] 'UVM_ERROR ID{index} broke', first at {member}:10"
        )
        lines.append({"line": 10, "text": f"B{index} {member}:10: UVM_ERROR … [ID{index}] broke"})
    return {
        "ref": ref,
        "tool": "triage",
        "args": {"family": family},
        "record": family,
        "error": None,
        "summary": "; ".join(parts),
        "excerpt": lines,
    }


def view(evidence: list[dict[str, Any]], families: list[str], evidence_left: int = 6):
    return SimpleNamespace(
        turn=2,
        budget_left={"evidence": evidence_left, "steps": 6},
        evidence=tuple(evidence),
        refusals=(),
        records=(),
        families=tuple({"glob": glob} for glob in families),
    )


FAMILIES = ["runs/a/*.log", "runs/b/*.log", "runs/c/*.log"]


def test_follow_ups_wait_for_every_family_then_read_the_nightlys_largest():
    first = receipt("E1", FAMILIES[0], [1, 1, 1])
    waiting = next_action(view([first], FAMILIES))
    assert [call["name"] for call in waiting["tool_calls"]] == ["triage", "triage"]
    rest = [receipt("E2", FAMILIES[1], [4, 3]), receipt("E3", FAMILIES[2], [4])]
    reading = next_action(view([first, *rest], FAMILIES))
    paths = [call["args"]["path"] for call in reading["tool_calls"]]
    assert paths == ["runs/b/e2_b1_t0.log", "runs/c/e3_b1_t0.log", "runs/b/e2_b2_t0.log"]


def test_a_stop_states_the_ten_largest_and_says_how_many_it_left_out():
    receipts = [
        receipt("E1", FAMILIES[0], [2, 1, 1, 1, 1, 1]),
        receipt("E2", FAMILIES[1], [3, 1, 1, 1, 1, 1, 1]),
    ]
    stopped = next_action(view(receipts, FAMILIES[:2], evidence_left=0))["message"]
    sizes = [int(h["statement"].split(": ", 1)[1].split(" ")[0]) for h in stopped["hypotheses"]]
    assert sizes == sorted([2, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1], reverse=True)[:10]
    assert stopped["hypotheses"][0]["refs"][0] == "E2:runs/b/e2_b1_t0.log:L10"
    assert "The receipts show 3 smaller bucket(s) not stated here" in stopped["text"]
