"""The waveform tool's arguments: a record, signal names or one-scope globs, and times with units,
each parsed strictly so that a bad one is refused in one line before anything is read."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated

from pydantic import AfterValidator, Field

from tools.args import ToolArgs, WaveformId

UNIT_EXPONENTS = {"fs": -15, "ps": -12, "ns": -9, "us": -6, "ms": -3, "s": 0}
"""The time units an argument may carry, as powers of ten of a second."""
MAX_SIGNALS = 16
_NUMBER = r"[0-9]{1,15}(?:\.[0-9]{1,6})?"
_UNIT = "|".join(UNIT_EXPONENTS)
INSTANT = rf"{_NUMBER}(?:{_UNIT})"
"""A time written without a space, as a waveform item's lines (`t=265000ps`) and a citation of
one (`E4:t=265ns`) write it."""
_TIME = re.compile(rf"(?P<number>{_NUMBER}) ?(?P<unit>{_UNIT})")
_SEGMENT = r"[A-Za-z_][A-Za-z0-9_$]*(?:\[[0-9]{1,9}(?::[0-9]{1,9})?\])?"
_EXACT = re.compile(rf"{_SEGMENT}(?:\.{_SEGMENT})*")
_GLOB = re.compile(rf"(?:{_SEGMENT}\.)*[A-Za-z0-9_$*\[\]:]*\*[A-Za-z0-9_$*\[\]:]*")


def _time(value: str) -> str:
    if _TIME.fullmatch(value) is None:
        raise ValueError(
            "must be a non-negative number and a unit (fs, ps, ns, us, ms, s), e.g. '265 ns'"
        )
    return value


def _signal(value: str) -> str:
    if _EXACT.fullmatch(value) is None and _GLOB.fullmatch(value) is None:
        raise ValueError(
            "must be a hierarchical name (`tb.dut.clk_en`) or a glob under one scope (`tb.dut.*`)"
        )
    return value


SimTime = Annotated[str, Field(max_length=40), AfterValidator(_time)]
"""A time with its unit: `265 ns`, `265000ps`, `1.5 us`."""
SignalName = Annotated[str, Field(min_length=1, max_length=300), AfterValidator(_signal)]
"""A signal's full hierarchical name, or `*` globs in its last part (`tb.dut.*`, `tb.dut.clk_*`)."""


class WaveformArgs(ToolArgs):
    path: WaveformId
    """The exact id of an approved `waveform` record (VCD or FST)."""
    signals: Annotated[list[SignalName], Field(min_length=1, max_length=MAX_SIGNALS)]
    """1–16 full names (`tb.dut.clk_en`) or globs under one scope (`tb.dut.*`)."""
    at: SimTime
    """The time to read each value at, with its unit: `265 ns`."""
    window: SimTime
    """Changes within `at` ± this are listed: `50 ns`."""


def seconds(value: str) -> Fraction:
    """A validated time argument, exactly, in seconds."""
    found = _TIME.fullmatch(value)
    assert found is not None  # validated by the model
    return Fraction(found["number"]) * Fraction(10) ** UNIT_EXPONENTS[found["unit"]]


def is_glob(name: str) -> bool:
    return "*" in name
