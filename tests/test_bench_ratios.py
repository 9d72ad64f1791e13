"""CI's bench guard (`bench/ratios.py`) fails on a ratio worse than its baseline by more than 30%
and on a ratio of the baseline that was not measured; a better, equal or new ratio passes."""

from __future__ import annotations

from bench.ratios import TOLERANCE, _bench_of, verdicts


def test_a_ratio_worse_by_more_than_the_tolerance_fails_and_one_within_it_passes():
    baseline = {"governed step, sqlite: Warrant / bare loop": 2.0}
    worse = verdicts({"governed step, sqlite: Warrant / bare loop": 2.0 * 1.31}, baseline)
    within = verdicts({"governed step, sqlite: Warrant / bare loop": 2.0 * 1.29}, baseline)
    better = verdicts({"governed step, sqlite: Warrant / bare loop": 1.2}, baseline)
    assert TOLERANCE == 0.30
    assert worse[0][3] == "WORSE by more than 30%"
    assert within[0][3] == "ok" and better[0][3] == "ok"


def test_a_ratio_no_longer_measured_fails_and_a_new_one_is_shown():
    rows = verdicts(
        {"sta, 10000 paths, 0 cells: stadiff / grep -c slack": 3.0},
        {"triage, 300 logs: warm / shell pipeline": 0.7},
    )
    assert {row[0]: row[3] for row in rows} == {
        "sta, 10000 paths, 0 cells: stadiff / grep -c slack": "new",
        "triage, 300 logs: warm / shell pipeline": "NOT MEASURED",
    }


def test_each_ratio_names_the_bench_that_measures_it():
    assert _bench_of("governed step, none: Warrant / create_agent") == "governed_step"
    assert _bench_of("memory recall, 1000 notes, sqlite: recall / grep -i -F") == "memory_recall"
    assert _bench_of("searchlogs, 50M: count / rg -F -c") == "searchlogs"
    assert _bench_of("an unknown bench, x") == ""
    assert _bench_of("startup: warrant --help / langgraph --help") == "startup"
    assert _bench_of("startup: warrant run R42 --db memory -q / langgraph --help") == "startup"
