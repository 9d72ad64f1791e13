"""A small reader over pywellen: the file's timescale, its signals by full name, and one signal's
value at a time and changes within a span, found by bisection (a signal's changes are indexed)."""

from __future__ import annotations

import bisect
import fnmatch
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from contract.codes import RefusalCode
from contract.errors import RecordRefusal

_UNIT_NAMES = {-21: "zs", -18: "as", -15: "fs", -12: "ps", -9: "ns", -6: "us", -3: "ms", 0: "s"}
MAX_VCD_BYTES = 24 << 20
"""The largest VCD a call reads. pywellen maps a VCD whole and encodes every signal of it at the
first signal read, so a call's peak memory grows with the file: `warrant run` peaks near 160 MiB
at this size (124 MiB with no call), under issue 57's 200 MB with about 30 MiB to spare, 180 MiB
at 34 MiB, and 1.2 GiB at 1 GiB (`bench/waveform_memory.py`, docs/performance.md). An FST is read
one signal at a time, whatever its size."""


@dataclass(frozen=True)
class Timescale:
    """One tick of the file's time: `factor` of `unit`."""

    factor: int
    unit: str
    exponent: int

    @property
    def tick(self) -> Fraction:
        """One tick, in seconds."""
        return self.factor * Fraction(10) ** self.exponent

    def shown(self, ticks: int) -> str:
        """A time in the file's unit, written as a citation names it: `265ns`."""
        return f"{ticks * self.factor}{self.unit}"

    def __str__(self) -> str:
        return f"{self.factor} {self.unit}"


@dataclass(frozen=True)
class Change:
    ticks: int
    value: str


def open_waveform(path: str) -> Any:
    """The file's header and signal index (signals' changes are loaded when asked for)."""
    import pywellen  # a compiled reader: its import is paid only by a waveform call

    return pywellen.Waveform(path, multi_threaded=False)


def refuse_unbounded(waveform: Any, record_id: str, size: int, limit: int) -> None:
    """A VCD of more than `limit` bytes refused, in one line, before its body is read (its header
    is: that is how pywellen tells a VCD); any other format is read at any admitted size."""
    if waveform.file_format == "VCD" and size > limit:
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE,
            f"{record_id} is a VCD of {size:,} bytes ({size / 2**20:,.1f} MiB), over the"
            f" {limit / 2**20:g} MiB a waveform call reads from a VCD (its reader maps and encodes"
            " the whole file, so its memory grows with it); an FST of it (GTKWave's `vcd2fst`)"
            " is read one signal at a time",
        )


@contextmanager
def unreadable_refused(record_id: str) -> Iterator[None]:
    """pywellen's failures, a malformed file's panic included (a `BaseException`), as one line."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit, GeneratorExit, RecordRefusal):
        raise
    except BaseException as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE, f"{record_id} cannot be read as VCD or FST: {reason}"
        ) from None


def timescale_of(waveform: Any) -> Timescale | None:
    found = waveform.timescale
    if found is None:
        return None
    exponent = int(found.unit.to_exponent())
    return Timescale(int(found.factor), _UNIT_NAMES.get(exponent, f"e{exponent}s"), exponent)


def variables(waveform: Any) -> dict[str, Any]:
    """Every variable by its full hierarchical name (the first, where a name repeats)."""
    found: dict[str, Any] = {}
    for var in waveform.all_vars():
        found.setdefault(str(var.full_name), var)
    return found


def matching(names: dict[str, Any], glob: str) -> list[str]:
    """The names a glob matches: `*` in its last part, the scope before it matched exactly (a
    glob never reaches into a deeper scope)."""
    scope, _, last = glob.rpartition(".")
    found = []
    for name in names:
        its_scope, _, its_last = name.rpartition(".")
        if its_scope == scope and fnmatch.fnmatchcase(its_last, last.replace("[", "[[]")):
            found.append(name)
    return sorted(found)


def value_at(var: Any, ticks: int) -> str | None:
    """The signal's value at a time, or None before its first change."""
    value = var.signal.value_at(ticks)
    return None if value is None else shown_value(var, value)


def nearest_changes(
    var: Any, span: tuple[int, int], at: int, limit: int
) -> tuple[list[Change], int]:
    """Of the signal's changes at times within `span` (ticks, both ends included), the `limit`
    nearest to `at`, in time order, and how many the span holds: only those shown are decoded."""
    signal = var.signal
    start = bisect.bisect_left(signal, span[0], key=_time)
    end = bisect.bisect_right(signal, span[1], key=_time)
    before = after = min(max(bisect.bisect_left(signal, at, key=_time), start), end)
    while after - before < min(limit, end - start):
        if before > start and (
            after >= end or at - _time(signal[before - 1]) <= _time(signal[after]) - at
        ):
            before -= 1
        else:
            after += 1
    shown = [Change(_time(signal[i]), shown_value(var, signal[i][1])) for i in range(before, after)]
    return shown, end - start


def _time(change: tuple[int, Any]) -> int:
    return int(change[0])


def shown_value(var: Any, value: Any) -> str:
    """A value as an engineer reads it: a bit as `0`/`1`, a vector as `8'h1a` (as bits when it
    holds x or z: `4'b1z0x`), a real as written, a string quoted."""
    if var.is_real:
        return repr(float(value))
    if var.is_string:
        return repr(str(value))
    width = var.bitwidth or 0
    if isinstance(value, int):
        return str(value) if width <= 1 else f"{width}'h{value:x}"
    text = str(value)
    if not text:  # an event: it happened, it holds no value
        return "event"
    return text if width <= 1 else f"{width}'b{text}"
