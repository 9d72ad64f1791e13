"""Figures of computed results (`analyze` with a `plot`), drawn as SVG.

The bytes are deterministic for the same result (no date, a fixed hash salt, text kept as text), so
a figure's sha256 names what it shows. A result that cannot be drawn raises `FigureError`; the
caller records it for that figure and publishes the text anyway.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from tools.storable import plain, shown

MAX_BARS = 60


class FigureError(ValueError):
    """Why a result could not be drawn, in one line."""


def figure_svg(computed: Mapping[str, Any], label: str) -> str:
    """The plot the call asked for, of its result; `label` names the receipt (`E3`)."""
    plot = computed["plot"]
    columns = list(computed["columns"])
    rows = computed["rows"]
    if not rows:
        raise FigureError("the result has no rows to draw")
    x = _column(columns, rows, plot["x"])
    import matplotlib  # here: only a run with a figure pays for loading it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"svg.hashsalt": "warrant", "svg.fonttype": "none", "font.size": 9}):
        figure, axes = plt.subplots(figsize=(7, 3.6), layout="constrained")
        try:
            _draw(axes, plot, x, None if plot["kind"] == "histogram" else _y(columns, rows, plot))
            title = plot.get("title") or f"{plot['kind']} of {plot['x']}"
            axes.set_title(f"{title}  ({label}, computed)", loc="left")
            out = io.StringIO()
            figure.savefig(out, format="svg", metadata={"Date": None})
        finally:
            plt.close(figure)
    return out.getvalue()


def _draw(axes: Any, plot: Mapping[str, Any], x: list[Any], y: list[float] | None) -> None:
    if plot["kind"] == "histogram":
        values = _numbers(x, plot["x"])
        axes.hist(values, bins=min(40, max(5, len(set(values)))), color="#4c72b0")
        axes.set_xlabel(plot["x"])
        axes.set_ylabel("count")
        return
    assert y is not None
    if plot["kind"] == "bar":
        if len(x) > MAX_BARS:
            raise FigureError(f"{len(x)} bars: at most {MAX_BARS} can be read")
        positions = range(len(x))
        axes.bar(positions, y, color="#4c72b0")
        axes.set_xticks(
            list(positions), [shown(value)[:32] for value in x], rotation=45, ha="right"
        )
    else:
        axes.plot(_numbers(x, plot["x"]), y, marker="o", color="#4c72b0")
    axes.set_xlabel(plot["x"])
    axes.set_ylabel(plot["y"])
    low, high = min(y), max(y)
    if low == high:  # all one value: an axis around it, not 0–0.05 (±1 is lost past 2⁵³)
        pad = max(1.0, abs(low) / 20)
        axes.set_ylim(low - pad, high + pad)


def _y(columns: list[str], rows: Sequence[Sequence[Any]], plot: Mapping[str, Any]) -> list[float]:
    if not plot.get("y"):
        raise FigureError(f"a {plot['kind']} plot needs a y column")
    return _numbers(_column(columns, rows, plot["y"]), plot["y"])


def _column(columns: list[str], rows: Sequence[Sequence[Any]], name: str) -> list[Any]:
    if name not in columns:
        raise FigureError(f"no column {name!r} in the result (its columns: {', '.join(columns)})")
    index = columns.index(name)
    return [row[index] for row in rows]


def _numbers(values: list[Any], name: str) -> list[float]:
    """The column's numbers, its typed ones (`tools.storable`) read back; NaN and infinities
    cannot be placed on an axis."""
    try:
        numbers = [
            float(plain(value))  # type: ignore[arg-type]
            for value in values
            if value is not None and not isinstance(value, bool)
        ]
    except (TypeError, ValueError):
        raise FigureError(f"column {name!r} is not numeric") from None
    if not all(math.isfinite(number) for number in numbers):
        raise FigureError(f"column {name!r} holds NaN or an infinity, which cannot be drawn")
    return numbers
