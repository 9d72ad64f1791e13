"""An evaluation's report as files: a Markdown table, the JSON rows, and a chart of pass^k and cost
per chooser (`warrant eval --out DIR`). Pure functions of the rows `graph.evaluation.evaluate` sums up."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COLUMNS = (
    "case",
    "chooser",
    "pass",
    "pass^k",
    "unknown",
    "steps",
    "model calls",
    "tokens",
    "s/run",
    "failing (owner)",
)


def row_cells(row: dict[str, Any], chooser: str) -> list[str]:
    """One row as the table shows it (the terminal table and the Markdown one alike)."""
    tokens = "unknown" if row["tokens"] is None else f"{row['tokens']:.0f}"
    return [
        row["case"],
        chooser,
        f"{row['pass']}/{row['runs']}",
        "yes" if row["pass_k"] else "no",
        str(row["unknown"]),
        f"{row['steps']:.1f}",
        f"{row['model_calls']:.1f}",
        tokens,
        f"{row['seconds']:.2f}",
        "; ".join(row["failing"]) or "-",
    ]


def by_chooser(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per chooser, over its cases: the share of cases where all k runs passed, the pass rate over
    all runs (unknowns in the denominator), and the mean cost of a run."""
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        total = totals.setdefault(
            row["chooser"],
            {
                "chooser": row["chooser"],
                "cases": 0,
                "pass_k": 0,
                "runs": 0,
                "pass": 0,
                "unknown": 0,
                "seconds": 0.0,
                "model_calls": 0.0,
                "tokens": 0.0,
            },
        )
        total["cases"] += 1
        total["pass_k"] += row["pass_k"]
        for name in ("runs", "pass", "unknown"):
            total[name] += row[name]
        for name in ("seconds", "model_calls"):
            total[name] += row[name] * row["runs"]
        total["tokens"] = (
            None
            if total["tokens"] is None or row["tokens"] is None
            else total["tokens"] + row["tokens"] * row["runs"]
        )
    return [
        {
            "chooser": total["chooser"],
            "cases": total["cases"],
            "pass_k_share": total["pass_k"] / total["cases"],
            "pass_rate": total["pass"] / total["runs"],
            "unknown": total["unknown"],
            "seconds_per_run": total["seconds"] / total["runs"],
            "model_calls_per_run": total["model_calls"] / total["runs"],
            "tokens_per_run": None if total["tokens"] is None else total["tokens"] / total["runs"],
        }
        for total in totals.values()
    ]


def markdown(rows: Sequence[dict[str, Any]], short: Any) -> str:
    """The per-case table, then the per-chooser summary, in Markdown (cells escaped)."""
    lines = [_md_row(COLUMNS), _md_row(["---"] * len(COLUMNS))]
    lines += [_md_row(row_cells(row, short(row["chooser"]))) for row in rows]
    lines += [
        "",
        _md_row(
            (
                "chooser",
                "cases",
                "pass^k",
                "pass rate",
                "unknown runs",
                "s/run",
                "model calls/run",
                "tokens/run",
            )
        ),
    ]
    lines.append(_md_row(["---"] * 8))
    for total in by_chooser(rows):
        tokens = "unknown" if total["tokens_per_run"] is None else f"{total['tokens_per_run']:.0f}"
        lines.append(
            _md_row(
                (
                    short(total["chooser"]),
                    str(total["cases"]),
                    f"{total['pass_k_share']:.0%}",
                    f"{total['pass_rate']:.0%}",
                    str(total["unknown"]),
                    f"{total['seconds_per_run']:.2f}",
                    f"{total['model_calls_per_run']:.1f}",
                    tokens,
                )
            )
        )
    return "\n".join(lines) + "\n"


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"


def chart(rows: Sequence[dict[str, Any]], short: Any, path: Path) -> None:
    """pass^k (share of cases) and pass rate per chooser, beside the mean seconds and model calls
    per run: what a choice of model buys and costs, in one picture."""
    import matplotlib

    matplotlib.use("Agg")  # no screen; the same image everywhere
    import matplotlib.pyplot as plt

    totals = by_chooser(rows)
    names = [short(total["chooser"]) for total in totals]
    places = range(len(totals))
    figure, (quality, cost) = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    width = 0.38
    quality.bar(
        [p - width / 2 for p in places],
        [t["pass_k_share"] for t in totals],
        width,
        label="pass^k (cases)",
    )
    quality.bar(
        [p + width / 2 for p in places],
        [t["pass_rate"] for t in totals],
        width,
        label="pass rate (runs)",
    )
    quality.set_ylim(0, 1.05)
    quality.set_title("Delivered handovers that met the suite")
    cost.bar(
        [p - width / 2 for p in places],
        [t["seconds_per_run"] for t in totals],
        width,
        label="seconds per run",
        color="tab:gray",
    )
    calls = cost.twinx()
    calls.bar(
        [p + width / 2 for p in places],
        [t["model_calls_per_run"] for t in totals],
        width,
        label="model calls per run",
        color="tab:orange",
    )
    calls.set_ylim(bottom=0)
    cost.set_title("Cost per run")
    cost.set_ylabel("seconds")
    calls.set_ylabel("model calls")
    for axis in (quality, cost):
        axis.set_xticks(list(places), names, rotation=15, ha="right")
    quality.legend(loc="lower left", fontsize="small")
    figure.legend(
        loc="outside lower right",
        fontsize="small",
        handles=[*cost.containers, *calls.containers],
        labels=["seconds per run", "model calls per run"],
    )
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_report(rows: Sequence[dict[str, Any]], short: Any, folder: Path) -> list[Path]:
    """`report.md`, `report.json` and `chart.png` in `folder` (made if missing); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "report.md", folder / "report.json", folder / "chart.png"]
    written[0].write_text(markdown(rows, short), encoding="utf-8")
    report = {"cases": list(rows), "choosers": by_chooser(rows)}
    written[1].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    chart(rows, short, written[2])
    return written
