"""The report people read: the console at 80 columns (no column squeezed to a stub: a table that
fits, then each check that did not pass, whole), and the chart (a per-case view, labels that do
not collide, no legend over a bar, pass^k apart from the pass rate, fractions on a 0–1 axis)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from graph.evaluation.chart import figure
from graph.evaluation.report import console_lines

ADVERSARY = "file:/somewhere/lab/choosers/r42_adversarial.jsonl"
REPLAY = "replay:/somewhere/lab/cassettes/r42-live-smollm2.jsonl"
LONG_CHECK = "consumed searchlogs on lab/runs/R42/reset_smoke.log line 22"


def short(chooser: str) -> str:
    kind, sep, where = chooser.partition(":")
    return f"{kind}:{Path(where).name}" if sep else chooser


def row(case: str, chooser: str, passed: int, runs: int = 1, unknown: int = 0) -> dict[str, Any]:
    failed = runs - passed - unknown
    not_passed = [
        {
            "check": LONG_CHECK,
            "outcome": "fail",
            "owner": "chooser",
            "runs": failed,
            "detail": "no receipt",
        }
    ] * bool(failed)
    not_passed += [
        {
            "check": "rubric: names the check",
            "outcome": "unknown",
            "owner": "grader",
            "runs": unknown,
            "detail": "no grader route: set WARRANT_GRADER_MODEL",
        }
    ] * bool(unknown)
    return {
        "case": case,
        "chooser": chooser,
        "runs": runs,
        "pass": passed,
        "fail": failed,
        "unknown": unknown,
        "pass_rate": passed / runs,
        "pass_k": passed == runs,
        "steps": 4.0,
        "model_calls": 1.0,
        "tokens": 2460.0,
        "seconds": 0.04,
        "failing": [f"{LONG_CHECK} (chooser)"] if failed else [],
        "not_passed": not_passed,
    }


ROWS = [
    row("r42", "scripted", 1),
    row("r42", ADVERSARY, 0),
    row("r42-live", "scripted", 1),
    row("r42-live", REPLAY, 0),
    row("r42-adversary", ADVERSARY, 1),
]
SKIPPED = [
    {"case": "r42-adversary", "chooser": "scripted", "meant_for": [ADVERSARY]},
    {"case": "r42-adversary", "chooser": REPLAY, "meant_for": [ADVERSARY]},
]


def test_the_console_fits_80_columns_and_shows_every_failing_check_whole():
    lines = console_lines(ROWS, SKIPPED, short, 80)
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    assert "…" not in text
    # The long check, wrapped at a space, reads whole once its lines are joined.
    assert LONG_CHECK in " ".join(line.strip() for line in lines)
    assert "  skipped 1 case(s) not meant for scripted: r42-adversary" in lines
    assert lines[0] == "scripted · 2 case(s), k=1, 1 skipped"
    assert "  pass rate 2/2 runs (100%) · k=1, so pass^k is the same · 0 unknown" in lines


def test_repeated_runs_report_pass_k_over_cases_beside_the_pass_rate_and_unknowns():
    rows = [row("a", "model", 2, runs=3, unknown=1), row("b", "model", 3, runs=3)]
    lines = console_lines(rows, [], short, 80)
    assert "  pass^k 1/2 cases (50%) · pass rate 5/6 runs (83%) · 1 unknown" in lines
    assert "  a: 1 unknown of 3 runs" not in lines and "  a: 1 of 3 runs unknown" in lines
    assert "    unknown: rubric: names the check (grader) in 1 run: no grader route: set" in lines


def axes_named(drawn: Any) -> dict[str, Any]:
    return {axis.get_title(): axis for axis in drawn.axes if axis.get_title()}


def collisions(texts: list[Any], renderer: Any) -> list[tuple[str, str]]:
    boxes = [
        (text.get_text(), text.get_window_extent(renderer)) for text in texts if text.get_text()
    ]
    return [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2) if box_a.overlaps(box_b)]


def test_the_chart_has_a_per_case_view_with_labels_that_do_not_collide():
    drawn = figure(ROWS, short, SKIPPED)
    drawn.canvas.draw()
    renderer = drawn.canvas.get_renderer()
    per_case = axes_named(drawn)["Pass fraction per case (runs passed / runs)"]
    cells = sorted(text.get_text() for text in per_case.texts)
    # 3 cases × 3 choosers: five runs shown, two cases not meant for a chooser, two not run.
    assert cells == [
        "0/1",
        "0/1",
        "1/1",
        "1/1",
        "1/1",
        "not meant",
        "not meant",
        "not run",
        "not run",
    ]
    for axis in drawn.axes:
        assert collisions(axis.get_xticklabels(), renderer) == []
        assert collisions(axis.get_yticklabels(), renderer) == []


def test_pass_k_is_drawn_apart_only_when_a_case_ran_more_than_once_and_its_legend_covers_no_bar():
    once = axes_named(figure(ROWS, short, SKIPPED))
    (quality,) = [axis for title, axis in once.items() if title.startswith("Pass rate per chooser")]
    assert "k=1" in quality.get_title() and len(quality.patches) == 3
    assert quality.get_legend() is None
    repeated = figure([row("a", "model", 2, runs=3), row("a", "scripted", 3, runs=3)], short)
    repeated.canvas.draw()
    renderer = repeated.canvas.get_renderer()
    quality = axes_named(repeated)["Pass rate and pass^k per chooser"]
    rate, pass_k = quality.containers
    assert [bar.get_width() for bar in rate] == [2 / 3, 1.0]
    assert [bar.get_width() for bar in pass_k] == [0.0, 1.0]
    legend = quality.get_legend().get_window_extent(renderer)
    drawn = [patch.get_window_extent(renderer) for patch in quality.patches]
    drawn += [label.get_window_extent(renderer) for label in quality.get_xticklabels()]
    drawn.append(quality.xaxis.label.get_window_extent(renderer))
    assert not any(legend.overlaps(box) for box in drawn if box.width and box.height)


def test_fractions_keep_a_0_to_1_axis_when_nothing_passed():
    drawn = figure([row("a", "model", 0), row("b", "model", 0)], short)
    (quality,) = [a for t, a in axes_named(drawn).items() if t.startswith("Pass rate per chooser")]
    assert quality.get_xlim() == (0.0, 1.0)
