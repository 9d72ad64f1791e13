"""An evaluation's report: the console's lines, and as files a Markdown report, the JSON rows and a
chart (`warrant eval --out DIR`). Pure functions of the rows `graph.evaluation.evaluate` sums up and
of the cases it skipped (`{"case", "chooser", "meant_for"}`): a chooser is reported only on the cases
meant for it, and the rest are said, with why. The totals per chooser are `totals.py`'s, the chart
`chart.py`'s."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graph.evaluation.chart import chart
from graph.evaluation.totals import Rows, Short, by_chooser, tokens_text

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
    """One row as the Markdown table shows it."""
    return [
        row["case"],
        chooser,
        *_measures(row),
        f"{row['seconds']:.2f}",
        "; ".join(row["failing"]) or "-",
    ]


def _measures(row: dict[str, Any]) -> list[str]:
    """The cells the Markdown table and the console share: runs passed, pass^k, unknown runs,
    steps, model calls and tokens per run."""
    return [
        f"{row['pass']}/{row['runs']}",
        "yes" if row["pass_k"] else "no",
        str(row["unknown"]),
        f"{row['steps']:.1f}",
        f"{row['model_calls']:.1f}",
        tokens_text(row["tokens"]),
    ]


def k_text(ks: Sequence[int]) -> str:
    """The repeat count of a chooser's cases: `3`, or `1–3` when they differ."""
    if not ks:
        return "-"
    return str(ks[0]) if len(ks) == 1 else f"{ks[0]}–{ks[-1]}"


# The console: a block per chooser, a table that fits 80 columns, then what did not pass and why.

CONSOLE_COLUMNS = ("case", "pass", "pass^k", "unknown", "steps", "calls", "tokens", "time/run")
_RIGHT = {"unknown", "steps", "calls", "tokens", "time/run"}


def console_lines(rows: Rows, skipped: Rows, short: Short, width: int = 80) -> list[str]:
    """The report as the console prints it, each line at most `width` wide (but a case id longer
    than the table allows): per chooser, its cases' table, its totals, the checks that did not pass
    with their owner and detail, and the cases skipped as not meant for it (report.md says, case by
    case, which choosers each is meant for)."""
    lines: list[str] = []
    for total in by_chooser(rows, skipped):
        chooser = total["chooser"]
        mine = [row for row in rows if row["chooser"] == chooser]
        skips = [skip for skip in skipped if skip["chooser"] == chooser]
        if lines:
            lines.append("")
        lines.append(_heading(short(chooser), total))
        if mine:
            lines += ["  " + line for line in _table(mine)]
            lines.append("  " + _totals(total))
        for row in mine:
            lines += _not_passed(row, width)
        if skips:
            names = ", ".join(skip["case"] for skip in skips)
            said = f"skipped {len(skips)} case(s) not meant for {short(chooser)}: {names}"
            lines += _wrapped(said, width, 2)
    return lines


def _heading(name: str, total: dict[str, Any]) -> str:
    ran = f"{total['cases']} case(s), k={k_text(total['k'])}"
    return f"{name} · {ran}" + (f", {total['skipped']} skipped" if total["skipped"] else "")


def _table(rows: Rows) -> list[str]:
    cells = [list(CONSOLE_COLUMNS)] + [
        [row["case"], *_measures(row), f"{row['seconds']:.2f}s"] for row in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(CONSOLE_COLUMNS))]
    return [
        "  ".join(
            cell.rjust(w) if name in _RIGHT else cell.ljust(w)
            for name, cell, w in zip(CONSOLE_COLUMNS, line, widths, strict=True)
        ).rstrip()
        for line in cells
    ]


def _totals(total: dict[str, Any]) -> str:
    rate = f"pass rate {total['pass']}/{total['runs']} runs ({total['pass_rate']:.0%})"
    unknown = f"{total['unknown']} unknown"
    if total["k"] == [1]:
        return f"{rate} · k=1, so pass^k is the same · {unknown}"
    cases = f"{total['pass_k_cases']}/{total['cases']} cases ({total['pass_k_share']:.0%})"
    return f"pass^k {cases} · {rate} · {unknown}"


def _not_passed(row: dict[str, Any], width: int) -> list[str]:
    """A case that did not pass every run: how many failed or stayed unknown, then each check
    that did not pass, its owner and detail (unknown ones marked)."""
    if row["pass"] == row["runs"]:
        return []
    failed, unknown, of = row["runs"] - row["pass"] - row["unknown"], row["unknown"], row["runs"]
    said = f"{failed} of {_runs(of)} failed" if failed else f"{unknown} of {_runs(of)} unknown"
    said += f", {unknown} unknown" if failed and unknown else ""
    lines = _wrapped(f"{row['case']}: {said}", width, 2)
    for check in row.get("not_passed", ()):
        lines += _wrapped(check_text(check, row["runs"]), width, 4)
    return lines


def check_text(check: dict[str, Any], runs: int) -> str:
    """A check that did not pass, as a reader needs it: unknown ones marked, its owner, in how
    many of the runs when not all, and its detail."""
    mark = "unknown: " if check["outcome"] != "fail" else ""
    text = f"{mark}{check['check']} ({check['owner']})"
    text += f" in {_runs(check['runs'])}" if check["runs"] != runs else ""
    return text + (f": {check['detail']}" if check["detail"] else "")


def _runs(count: int) -> str:
    return f"{count} run" + ("" if count == 1 else "s")


def _wrapped(text: str, width: int, indent: int) -> list[str]:
    pad = " " * indent
    return textwrap.wrap(
        text,
        max(width, 40),
        initial_indent=pad,
        subsequent_indent=pad + "  ",
        break_on_hyphens=False,
    )


# The Markdown report.


def markdown(rows: Rows, short: Short, skipped: Rows = (), title: str = "") -> str:
    """The per-case table, the per-chooser summary, the cases skipped and the checks that did not
    pass, in Markdown (cells escaped)."""
    lines = [f"# {title}", ""] if title else []
    lines += [_md_row(COLUMNS), _md_row(["---"] * len(COLUMNS))]
    lines += [_md_row(row_cells(row, short(row["chooser"]))) for row in rows]
    lines += ["", *_md_choosers(rows, short, skipped)]
    if skipped:
        lines += ["", "Skipped (a case counts only for the choosers it is meant for):", ""]
        lines += _md_skipped(skipped, short)
    failing = [row for row in rows if row["pass"] != row["runs"]]
    if failing:
        lines += ["", "Not passed:", ""]
        lines += [_md_not_passed(row, short) for row in failing]
    return "\n".join(lines) + "\n"


def _md_choosers(rows: Rows, short: Short, skipped: Rows) -> list[str]:
    names = (
        *("chooser", "cases", "k", "pass^k", "pass rate", "unknown runs", "skipped"),
        *("s/run", "model calls/run", "tokens/run"),
    )
    lines = [_md_row(names), _md_row(["---"] * len(names))]
    for total in by_chooser(rows, skipped):
        lines.append(
            _md_row(
                (
                    short(total["chooser"]),
                    str(total["cases"]),
                    k_text(total["k"]),
                    f"{total['pass_k_share']:.0%}",
                    f"{total['pass_rate']:.0%}",
                    str(total["unknown"]),
                    str(total["skipped"]),
                    f"{total['seconds_per_run']:.2f}",
                    f"{total['model_calls_per_run']:.1f}",
                    tokens_text(total["tokens_per_run"]),
                )
            )
        )
    return lines


def _md_skipped(skipped: Rows, short: Short) -> list[str]:
    """A row per case: the choosers it is meant for, and those of this evaluation it skipped."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for skip in skipped:
        by_case.setdefault(skip["case"], []).append(skip)
    lines = [_md_row(("case", "meant for", "skipped with")), _md_row(["---"] * 3)]
    for case, skips in by_case.items():
        meant = ", ".join(short(chooser) for chooser in skips[0]["meant_for"])
        lines.append(_md_row((case, meant, ", ".join(short(s["chooser"]) for s in skips))))
    return lines


def _md_not_passed(row: dict[str, Any], short: Short) -> str:
    checks = "; ".join(check_text(check, row["runs"]) for check in row.get("not_passed", ()))
    head = f"{row['case']} with {short(row['chooser'])}, {row['pass']}/{row['runs']} passed"
    return f"- {head}: {checks}".replace("\n", " ")


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"


def write_report(
    rows: Rows,
    short: Short,
    folder: Path,
    *,
    skipped: Rows = (),
    title: str = "",
    order: Sequence[str] = (),
) -> list[Path]:
    """`report.md`, `report.json` and `chart.png` in `folder` (made if missing); their paths.
    `order` is the suite's order of cases, which the chart keeps whatever ran."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "report.md", folder / "report.json", folder / "chart.png"]
    written[0].write_text(markdown(rows, short, skipped, title), encoding="utf-8")
    report = {
        "title": title,
        "cases": list(rows),
        "choosers": by_chooser(rows, skipped),
        "skipped": list(skipped),
    }
    written[1].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    chart(rows, short, written[2], skipped, order)
    return written
