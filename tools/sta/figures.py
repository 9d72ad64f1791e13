"""The STA tools' numbers: slacks summed and subtracted exactly on the reports' own digits, and
shown with the precision the report carries (seed 001 A33: source, formula and exact arithmetic
are separate owners)."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
"""A number as the reports print it (a regular expression's part)."""
DIGITS = 6
"""Numbers are shown, and slack differences rounded, to at most this many decimals: below any
report's precision, above the binary noise of subtracting two decimal numbers."""


def _scaled(value: float) -> int:
    """The value in units of 10⁻⁶: exact for a figure read with at most `DIGITS` decimals."""
    return round(value * float(10**DIGITS))


def negative_sum(slacks: Iterable[float | None]) -> Decimal:
    """TNS: the sum of the negative slacks, in exact decimal on the report's digits (integers
    of 10⁻⁶, summed exactly), never binary floating point."""
    total = sum(_scaled(slack) for slack in slacks if slack is not None and slack < 0)
    return Decimal(total).scaleb(-DIGITS)


def difference(after: float, before: float) -> Decimal:
    """Δ = after − before, exact on the report's digits."""
    return Decimal(_scaled(after) - _scaled(before)).scaleb(-DIGITS)


def figure(value: float | Decimal, signed: bool = False) -> str:
    """A number with two decimals, or as many more (up to `DIGITS`) as it carries: a report
    written with `-digits 3` keeps its third decimal."""
    text = f"{value:+.{DIGITS}f}" if signed else f"{value:.{DIGITS}f}"
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.rstrip('0').ljust(2, '0')}"
