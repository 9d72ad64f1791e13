"""An evaluation's chart (`chart.png` of `warrant eval --out DIR`): per case and chooser the pass
fraction, beside per chooser the pass rate and the cost of a run. matplotlib is loaded by a chart
only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from graph.evaluation.totals import Rows, Short, by_chooser, tokens_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
        said += f" · {tokens_text(total['tokens_per_run'])} tokens"
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
