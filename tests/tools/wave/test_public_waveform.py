"""waveform over a real public waveform, the same counter dumped as VCD and as FST
(`tests/data/waveforms/`, from hudson-trading/wavetools, MIT: `tests/data/SOURCES.md`). The
expected lines come from a small reader of the VCD's text written here, never from the tool; the
FST must read the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import one_record
from tools.wave import run as wave
from tools.wave.args import WaveformArgs

DATA = Path(__file__).resolve().parents[2] / "data" / "waveforms"


def vcd_changes(text: str) -> dict[str, list[tuple[int, int]]]:
    """Each variable's (time in ns, value) changes, by its dotted name: the VCD's text read by
    hand (scopes, `$var`, `#time`, scalar and `b…` vector changes)."""
    scopes: list[str] = []
    names: dict[str, list[str]] = {}
    changes: dict[str, list[tuple[int, int]]] = {}
    time = 0
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "$scope":
            scopes.append(words[2])
        elif words[0] == "$upscope":
            scopes.pop()
        elif words[0] == "$var":
            names.setdefault(words[3], []).append(".".join([*scopes, words[4]]))
        elif words[0].startswith("#"):
            time = int(words[0][1:])
        elif re.fullmatch(r"[01][^\s]+", words[0]):
            for name in names[words[0][1:]]:
                changes.setdefault(name, []).append((time, int(words[0][0])))
        elif words[0].startswith("b") and len(words) == 2:
            for name in names[words[1]]:
                changes.setdefault(name, []).append((time, int(words[0][1:], 2)))
    return changes


def expected(changes: list[tuple[int, int]], name: str, width: int, at: int, window: int):
    def shown(value: int) -> str:
        return str(value) if width == 1 else f"{width}'h{value:x}"

    now = [value for t, value in changes if t <= at][-1]
    return [
        f"t={at}ns {name} = {shown(now)} (at)",
        *(f"t={t}ns {name} -> {shown(v)}" for t, v in changes if at - window <= t <= at + window),
    ]


@pytest.mark.parametrize("filename", ["counter.vcd", "counter.fst"])
def test_a_public_counter_reads_as_its_vcd_text_says(tmp_path, filename):
    record = one_record(tmp_path, filename, "waveform", (DATA / filename).read_bytes())
    args = WaveformArgs(path="r", signals=["t.clk", "t.cyc"], at="30 ns", window="20 ns")
    excerpt = wave.run(args, {"path": record})
    changes = vcd_changes((DATA / "counter.vcd").read_text())
    assert [line.text for line in excerpt.lines] == [
        *expected(changes["t.clk"], "t.clk", 1, 30, 20),
        *expected(changes["t.cyc"], "t.cyc", 32, 30, 20),
    ]
    assert "timescale 1 ns" in excerpt.summary and not excerpt.unknowns


def test_the_fst_and_the_vcd_of_the_counter_read_alike(tmp_path):
    args = WaveformArgs(path="r", signals=["t.the_sub.*"], at="45 ns", window="50 ns")
    read = []
    for filename in ("counter.vcd", "counter.fst"):
        folder = tmp_path / filename.replace(".", "_")
        folder.mkdir()
        record = one_record(folder, filename, "waveform", (DATA / filename).read_bytes())
        read.append([line.text for line in wave.run(args, {"path": record}).lines])
    assert read[0] == read[1] and len(read[0]) > 2
