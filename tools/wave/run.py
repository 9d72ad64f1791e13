"""waveform: each named signal's value at a time and its changes around it, bounded."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scenario.registry import Record
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.wave import values
from tools.wave.args import WaveformArgs, is_glob, seconds
from tools.wave.proof import admitted_path

MAX_CHANGES_PER_SIGNAL = 20
MAX_CHANGES = 100
"""Changes shown in all; beyond either cap the nearest to `at` are shown and the rest counted."""
MAX_MATCHED = 32
"""Signals read in all (a glob may match many); the rest are named as not read."""


@dataclass
class _Reading:
    lines: list[Line] = field(default_factory=list)
    unknowns: list[str] = field(default_factory=list)
    shown: int = 0
    hidden: int = 0


def run(args: WaveformArgs, records: Mapping[str, Record]) -> Excerpt:
    """Signals' values at a time and their changes within a window around it, in an approved VCD or FST waveform (full names or `scope.*` globs; times with units, e.g. `265 ns`)."""
    record = records["path"]
    with admitted_path(record) as path, values.unreadable_refused(record.id):
        waveform = values.open_waveform(path)
        values.refuse_unbounded(waveform, record.id, record.size, values.MAX_VCD_BYTES)
        scale = values.timescale_of(waveform)
        if scale is None:
            return make_excerpt(
                f"{record.id} states no timescale: a time in units cannot be placed in it",
                (),
                False,
                ("the waveform's timescale (the file states none)",),
            )
        excerpt = _read(args, waveform, scale)
    return excerpt


def _read(args: WaveformArgs, waveform: Any, scale: values.Timescale) -> Excerpt:
    at, window = seconds(args.at), seconds(args.window)
    at_ticks = math.floor(at / scale.tick)
    first = max(0, math.ceil((at - window) / scale.tick))
    last = math.floor((at + window) / scale.tick)
    names, reading = _wanted(args.signals, values.variables(waveform))
    for name, var in names:
        _read_signal(name, var, at_ticks, (first, last), scale, reading)
    summary = (
        f"{len(names)} signal{'s' * (len(names) != 1)} at {scale.shown(at_ticks)}, changes"
        f" {scale.shown(first)}–{scale.shown(last)} (timescale {scale}):"
        f" {reading.shown} changes shown"
    )
    if reading.hidden:
        summary += f", {reading.hidden} more not shown (the nearest to {args.at} are shown)"
    return make_excerpt(summary, reading.lines, bool(reading.hidden), reading.unknowns)


def _wanted(asked: list[str], known: dict[str, Any]) -> tuple[list[tuple[str, Any]], _Reading]:
    """The variables asked for, once each in the order asked; what names none, as unknowns."""
    reading, chosen = _Reading(), dict[str, Any]()
    for name in asked:
        found = values.matching(known, name) if is_glob(name) else [name] * (name in known)
        if not found:
            what = "no signal matches the glob" if is_glob(name) else "no signal named"
            reading.unknowns.append(f"{what} {name!r} in this waveform")
        for match in found:
            if len(chosen) < MAX_MATCHED:
                chosen.setdefault(match, known[match])
            elif match not in chosen:
                reading.unknowns.append(f"{match}: not read (more than {MAX_MATCHED} signals)")
    return list(chosen.items()), reading


def _read_signal(
    name: str,
    var: Any,
    at_ticks: int,
    span: tuple[int, int],
    scale: values.Timescale,
    reading: _Reading,
) -> None:
    value = values.value_at(var, at_ticks)
    said = "unknown (no value yet)" if value is None else value
    reading.lines.append(
        make_line(len(reading.lines) + 1, f"t={scale.shown(at_ticks)} {name} = {said} (at)")
    )
    if value is None:
        reading.unknowns.append(f"{name}: no value at {scale.shown(at_ticks)}")
    room = max(0, min(MAX_CHANGES_PER_SIGNAL, MAX_CHANGES - reading.shown))
    shown, total = values.nearest_changes(var, span, at_ticks, room)
    for change in shown:
        text = f"t={scale.shown(change.ticks)} {name} -> {change.value}"
        reading.lines.append(make_line(len(reading.lines) + 1, text))
    reading.shown += len(shown)
    if total > len(shown):
        reading.hidden += total - len(shown)
        reading.lines.append(
            make_line(
                len(reading.lines) + 1,
                f"{name}: {total - len(shown)} more changes in the window not shown",
            )
        )
