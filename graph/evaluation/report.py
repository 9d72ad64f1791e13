"""An evaluation's report: the console's lines, and as files a Markdown report, the JSON rows and a
chart (`warrant eval --out DIR`). Pure functions of the rows `graph.evaluation.evaluate` sums up and
of the cases it skipped (`{"case", "chooser", "meant_for"}`): a chooser is reported only on the cases
meant for it, and the rest are said, with why."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

Short = Callable[[str], str]
Rows = Sequence[dict[str, Any]]

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
        _tokens(row["tokens"]),
    ]


def _tokens(tokens: float | None) -> str:
    return "unknown" if tokens is None else f"{tokens:.0f}"


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
                    _tokens(total["tokens_per_run"]),
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


# The chart.


def figure(rows: Rows, short: Short, skipped: Rows = (), order: Sequence[str] = ()) -> Figure:
    """Per case and chooser the pass fraction (skipped cells grey), beside per chooser the pass
    rate (and pass^k when some case ran more than once) on a 0–1 axis, and the cost of a run."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    totals = by_chooser(rows, skipped)
    seen = [*(row["case"] for row in rows), *(skip["case"] for skip in skipped)]
    cases = [case for case in order if case in seen] + [
        c for c in dict.fromkeys(seen) if c not in order
    ]
    height = max(4.8, 0.36 * len(cases) + 2.4)
    drawn = Figure(figsize=(12, height), layout="constrained", dpi=110)
    FigureCanvasAgg(drawn)  # a canvas of its own: no pyplot state, safe beside other threads
    grid = drawn.add_gridspec(2, 2, width_ratios=(1.2, 1))
    not_meant = {(skip["case"], skip["chooser"]) for skip in skipped}
    _per_case(drawn, drawn.add_subplot(grid[:, 0]), rows, (cases, not_meant), totals, short)
    _quality(drawn.add_subplot(grid[0, 1]), totals, short)
    _cost(drawn.add_subplot(grid[1, 1]), totals, short)
    return drawn


def _per_case(
    drawn: Figure,
    axis: Axes,
    rows: Rows,
    grid: tuple[list[str], set[tuple[str, str]]],
    totals: Rows,
    short: Short,
) -> None:
    """A heatmap of cases × choosers: green all passed, red none, grey not run (and why)."""
    import numpy as np
    from matplotlib import colormaps

    cases, not_meant = grid
    choosers = [total["chooser"] for total in totals]
    fraction = np.full((len(cases), len(choosers)), np.nan)
    for row in rows:
        fraction[cases.index(row["case"]), choosers.index(row["chooser"])] = (
            row["pass"] / row["runs"]
        )
    palette = colormaps["RdYlGn"].with_extremes(bad="#e4e4e4")
    image = axis.imshow(np.ma.masked_invalid(fraction), cmap=palette, vmin=0, vmax=1, aspect="auto")
    for row in rows:
        y, x = cases.index(row["case"]), choosers.index(row["chooser"])
        dark = not 0.2 < fraction[y, x] < 0.8  # white on the deep red and green ends
        said = f"{row['pass']}/{row['runs']}"
        axis.text(
            x, y, said, ha="center", va="center", fontsize=9, color="white" if dark else "black"
        )
    for y, x in zip(*np.nonzero(np.isnan(fraction)), strict=True):
        said = "not meant" if (cases[y], choosers[x]) in not_meant else "not run"
        axis.text(x, y, said, ha="center", va="center", fontsize=7, color="#666666")
    axis.set_yticks(range(len(cases)), cases, fontsize=8)
    axis.set_xticks(range(len(choosers)), [_wrapped_name(short(c)) for c in choosers], fontsize=8)
    axis.xaxis.tick_top()
    axis.set_title("Pass fraction per case (runs passed / runs)", fontsize=10)
    drawn.colorbar(image, ax=axis, shrink=0.5, label="pass fraction", location="bottom")


def _wrapped_name(name: str) -> str:
    """A chooser's name on two lines at its kind (`file:` / `replay:`), so labels do not collide."""
    kind, sep, rest = name.partition(":")
    return f"{kind}:\n{rest}" if sep else name


def _quality(axis: Axes, totals: Rows, short: Short) -> None:
    names = [short(total["chooser"]) for total in totals]
    places = list(range(len(totals)))
    repeated = any(k > 1 for total in totals for k in total["k"])
    rate = [total["pass_rate"] for total in totals]
    if repeated:
        height = 0.38
        axis.barh([p - height / 2 for p in places], rate, height, label="pass rate (runs)")
        axis.barh(
            [p + height / 2 for p in places],
            [total["pass_k_share"] for total in totals],
            height,
            label="pass^k (cases: all k runs passed)",
            color="tab:purple",
            hatch="//",
        )
        # Below the axis and its tick labels (a pad in font sizes, whatever the figure's height).
        axis.legend(
            loc="upper center", bbox_to_anchor=(0.5, 0), borderaxespad=2.6, ncols=2, fontsize=8
        )
        axis.set_title("Pass rate and pass^k per chooser", fontsize=10)
    else:
        axis.barh(places, rate, 0.6, color="tab:blue")
        axis.set_title("Pass rate per chooser (k=1: pass^k is the same)", fontsize=10)
    for place, total in zip(places, totals, strict=True):
        said = f"{total['pass']}/{total['runs']} runs"
        said += f" · pass^k {total['pass_k_cases']}/{total['cases']} cases" if repeated else ""
        axis.text(0.98, place, said, ha="right", va="center", fontsize=8, bbox=_LABEL_BOX)
    axis.set_xlim(0, 1)  # fractions: never an axis scaled to the data (0–0.05 for all zeros)
    axis.tick_params(axis="x", labelsize=8)
    axis.set_yticks(places, names, fontsize=8)
    axis.invert_yaxis()


_LABEL_BOX = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}


def _cost(axis: Axes, totals: Rows, short: Short) -> None:
    names = [short(total["chooser"]) for total in totals]
    places = list(range(len(totals)))
    seconds = [total["seconds_per_run"] for total in totals]
    axis.barh(places, seconds, 0.6, color="tab:gray")
    longest = max(seconds, default=0.0) or 1.0
    for place, total in zip(places, totals, strict=True):
        said = f" {total['seconds_per_run']:.2f} s · {total['model_calls_per_run']:.1f} calls"
        said += f" · {_tokens(total['tokens_per_run'])} tokens"
        axis.annotate(said, (total["seconds_per_run"], place), va="center", fontsize=8)
    axis.set_xlim(0, longest * 2.2)  # room for the words beside the longest bar
    axis.set_yticks(places, names, fontsize=8)
    axis.invert_yaxis()
    axis.set_title("Cost of a run", fontsize=10)
    axis.set_xlabel("seconds per run", fontsize=8)


def chart(
    rows: Rows, short: Short, path: Path, skipped: Rows = (), order: Sequence[str] = ()
) -> None:
    """The figure as a PNG at `path`."""
    figure(rows, short, skipped, order).savefig(path)


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
