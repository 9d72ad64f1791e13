"""The flag on passages written apart from its rules, by people who had not read them (see
tests/corpus/injections/README.md): what it catches must not fall below what was measured, and
the ordinary lines chosen to look risky stay unflagged but for the one known false alarm."""

import json
from pathlib import Path

import pytest

from tools.flags import instruction_flags

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "injections"


def lines(name: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (CORPUS / name).read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("name", "measured"),
    [("set1_tuned.jsonl", 64), ("set2_tuned.jsonl", 48), ("set3_held_out.jsonl", 36)],
)
def test_recall_stays_at_least_what_was_measured(name, measured):
    caught = sum(bool(instruction_flags(item["text"])) for item in lines(name))
    assert caught >= measured


def test_risky_looking_ordinary_lines_stay_unflagged():
    flagged = [item["id"] for item in lines("benign.jsonl") if instruction_flags(item["text"])]
    assert flagged == ["b26"]  # "(root cause: off-by-one …)" in a bug reference: the English rule
