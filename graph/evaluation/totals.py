"""An evaluation's totals per chooser, over the cases meant for it: what the report's console lines,
Markdown and chart (`report.py`, `chart.py`) all show of a chooser."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Short = Callable[[str], str]
Rows = Sequence[dict[str, Any]]


def by_chooser(rows: Rows, skipped: Rows = ()) -> list[dict[str, Any]]:
    """Per chooser, over the cases meant for it: the share of cases where all k runs passed, the
    pass rate over all runs (unknown runs in the denominator), the mean cost of a run, the repeat
    counts `k` its cases ran, and how many cases were skipped as not meant for it."""
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        total = totals.setdefault(row["chooser"], _empty_total(row["chooser"]))
        total["cases"] += 1
        total["pass_k"] += row["pass_k"]
        total["k"].add(row["runs"])
        for name in ("runs", "pass", "unknown"):
            total[name] += row[name]
        for name in ("seconds", "model_calls"):
            total[name] += row[name] * row["runs"]
        total["tokens"] = (
            None
            if total["tokens"] is None or row["tokens"] is None
            else total["tokens"] + row["tokens"] * row["runs"]
        )
    for skip in skipped:
        totals.setdefault(skip["chooser"], _empty_total(skip["chooser"]))["skipped"] += 1
    return [_per_run(total) for total in totals.values()]


def _empty_total(chooser: str) -> dict[str, Any]:
    return {
        "chooser": chooser,
        "cases": 0,
        "pass_k": 0,
        "k": set(),
        "runs": 0,
        "pass": 0,
        "unknown": 0,
        "skipped": 0,
        "seconds": 0.0,
        "model_calls": 0.0,
        "tokens": 0.0,
    }


def _per_run(total: dict[str, Any]) -> dict[str, Any]:
    runs = total["runs"] or 1  # a chooser with every case skipped ran nothing
    return {
        "chooser": total["chooser"],
        "cases": total["cases"],
        "k": sorted(total["k"]),
        "runs": total["runs"],
        "pass": total["pass"],
        "pass_k_cases": total["pass_k"],
        "pass_k_share": total["pass_k"] / total["cases"] if total["cases"] else 0.0,
        "pass_rate": total["pass"] / runs,
        "unknown": total["unknown"],
        "skipped": total["skipped"],
        "seconds_per_run": total["seconds"] / runs,
        "model_calls_per_run": total["model_calls"] / runs,
        "tokens_per_run": None if total["tokens"] is None else total["tokens"] / runs,
    }


def tokens_text(tokens: float | None) -> str:
    """Tokens per run as shown: `unknown` when a chooser does not report them."""
    return "unknown" if tokens is None else f"{tokens:.0f}"
