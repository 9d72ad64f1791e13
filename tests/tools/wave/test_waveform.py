"""waveform over VCDs written here with pyvcd: the expected values come from the list of changes
each test wrote, never from the tool."""

from __future__ import annotations

import io
import os

import pytest
from pydantic import ValidationError

from contract.errors import RecordRefusal
from scenario.registry import Record
from tests.helpers import one_record
from tools.catalog import tools_of
from tools.wave import run as wave
from tools.wave.args import WaveformArgs

CLK = [(t, (t // 10) % 2) for t in range(0, 500, 10)]
"""tb.dut.clk_en's changes (ns): 0 at 0, then toggling every 10 ns."""
COUNT = [(t, (t // 10) % 256) for t in range(0, 500, 10)]
READY = [(0, 0), (265, 1), (400, 0)]
"""tb.dut.ready rises at 265 ns."""


def write_vcd(timescale: str = "1 ns", scale: int = 1) -> bytes:
    from vcd import VCDWriter

    text = io.StringIO()
    with VCDWriter(text, timescale=timescale, date="today") as writer:
        clk = writer.register_var("tb.dut", "clk_en", "wire", size=1)
        count = writer.register_var("tb.dut", "count", "reg", size=8)
        ready = writer.register_var("tb.dut", "ready", "wire", size=1)
        top = writer.register_var("tb", "done", "wire", size=1)
        changes = sorted(
            [(t, clk, v) for t, v in CLK]
            + [(t, count, v) for t, v in COUNT]
            + [(t, ready, v) for t, v in READY]
            + [(0, top, 0)],
            key=lambda change: change[0],
        )
        for t, var, value in changes:
            writer.change(var, t * scale, value)
    return text.getvalue().encode()


@pytest.fixture
def record(tmp_path) -> Record:
    return one_record(tmp_path, "sim.vcd", "waveform", write_vcd())


def read(record: Record, signals: list[str], at: str, window: str = "0 ns"):
    args = WaveformArgs(path="r", signals=signals, at=at, window=window)
    return wave.run(args, {"path": record})


def value_at(changes: list[tuple[int, int]], t: int) -> int:
    return [value for time, value in changes if time <= t][-1]


def texts(excerpt) -> list[str]:
    return [line.text for line in excerpt.lines]


def test_an_exact_name_gives_its_value_at_the_time_and_its_changes_in_the_window(record):
    excerpt = read(record, ["tb.dut.clk_en"], "265 ns", "30 ns")
    expected = [f"t={t}ns tb.dut.clk_en -> {v}" for t, v in CLK if 235 <= t <= 295]
    assert texts(excerpt) == [f"t=265ns tb.dut.clk_en = {value_at(CLK, 265)} (at)", *expected]
    assert "timescale 1 ns" in excerpt.summary
    assert not excerpt.truncated and not excerpt.unknowns


def test_a_change_at_the_time_itself_is_its_value_then(record):
    excerpt = read(record, ["tb.dut.ready"], "265 ns", "0 ns")
    assert texts(excerpt) == ["t=265ns tb.dut.ready = 1 (at)", "t=265ns tb.dut.ready -> 1"]


def test_the_window_bounds_are_included_and_nothing_beyond(record):
    shown = texts(read(record, ["tb.dut.count"], "250 ns", "20 ns"))[1:]
    assert shown == [f"t={t}ns tb.dut.count -> 8'h{v:x}" for t, v in COUNT if 230 <= t <= 270]


@pytest.mark.parametrize("at", ["265 ns", "265000 ps", "265000000fs", "0.265 us"])
def test_time_units_name_the_same_time(record, at):
    excerpt = read(record, ["tb.dut.ready"], at)
    assert texts(excerpt)[0] == "t=265ns tb.dut.ready = 1 (at)"


def test_a_file_in_another_timescale_says_it_and_places_times_in_it(tmp_path):
    record = one_record(tmp_path, "ps.vcd", "waveform", write_vcd("10 ps", 100))  # 1 ns = 100 ticks
    excerpt = read(record, ["tb.dut.ready"], "265 ns")
    assert "timescale 10 ps" in excerpt.summary
    assert texts(excerpt) == ["t=265000ps tb.dut.ready = 1 (at)", "t=265000ps tb.dut.ready -> 1"]


def test_a_glob_reads_the_signals_of_one_scope_only(record):
    excerpt = read(record, ["tb.dut.*"], "265 ns")
    at_lines = [text for text in texts(excerpt) if text.endswith("(at)")]
    assert at_lines == [
        f"t=265ns tb.dut.clk_en = {value_at(CLK, 265)} (at)",
        f"t=265ns tb.dut.count = 8'h{value_at(COUNT, 265):x} (at)",
        f"t=265ns tb.dut.ready = {value_at(READY, 265)} (at)",
    ]
    assert not any("tb.done" in text for text in texts(excerpt))


def test_a_missing_signal_and_an_empty_glob_are_named_as_unknowns(record):
    excerpt = read(record, ["tb.dut.clk_enable", "tb.cpu.*", "tb.done"], "10 ns")
    assert excerpt.unknowns == (
        "no signal named 'tb.dut.clk_enable' in this waveform",
        "no signal matches the glob 'tb.cpu.*' in this waveform",
    )
    assert texts(excerpt) == ["t=10ns tb.done = 0 (at)"]


def test_changes_are_capped_per_signal_with_the_count_of_those_not_shown(record):
    excerpt = read(record, ["tb.dut.clk_en"], "250 ns", "1 us")
    window = [(t, v) for t, v in CLK]  # every change lies within 250 ns ± 1 us
    nearest = sorted(
        sorted(window, key=lambda c: (abs(c[0] - 250), c[0]))[: wave.MAX_CHANGES_PER_SIGNAL]
    )
    assert texts(excerpt)[1:-1] == [f"t={t}ns tb.dut.clk_en -> {v}" for t, v in nearest]
    hidden = len(window) - wave.MAX_CHANGES_PER_SIGNAL
    assert texts(excerpt)[-1] == f"tb.dut.clk_en: {hidden} more changes in the window not shown"
    assert excerpt.truncated and f"{hidden} more not shown" in excerpt.summary


def test_changes_are_capped_in_all(record, monkeypatch):
    monkeypatch.setattr(wave, "MAX_CHANGES", 25)
    excerpt = read(record, ["tb.dut.clk_en", "tb.dut.count"], "250 ns", "1 us")
    assert sum("->" in text for text in texts(excerpt)) == 25
    assert f"{2 * len(CLK) - 25} more not shown" in excerpt.summary


@pytest.mark.parametrize(
    "change",
    [
        {"at": "-5 ns"},
        {"at": "265"},
        {"at": "265 sec"},
        {"at": "265 NS"},
        {"window": "1e3 ns"},
        {"signals": []},
        {"signals": ["tb.dut.clk_en"] * 17},
        {"signals": ["tb..dut"]},
        {"signals": ["tb.dut.clk_en\n"]},
        {"signals": ["tb.*.clk_en"]},
        {"signals": "tb.dut.clk_en"},
        {"extra": 1},
    ],
)
def test_bad_arguments_are_refused_by_the_model(change):
    arguments = {"path": "r", "signals": ["tb.dut.clk_en"], "at": "265 ns", "window": "5 ns"}
    with pytest.raises(ValidationError):
        WaveformArgs.model_validate(arguments | change)


def test_a_record_changed_after_admission_is_refused(record):
    with open(record.path, "r+b") as handle:  # same size, same inode: only the bytes differ
        handle.seek(-2, os.SEEK_END)
        handle.write(b"0\n")
    os.utime(record.path, ns=(record.mtime_ns, record.mtime_ns))
    with pytest.raises(RecordRefusal) as caught:
        read(record, ["tb.dut.clk_en"], "265 ns")
    assert caught.value.code == "record_changed"


def test_a_file_that_is_no_waveform_is_refused_in_one_line(tmp_path):
    record = one_record(tmp_path, "x.vcd", "waveform", b"not a waveform\n")
    with pytest.raises(RecordRefusal) as caught:
        read(record, ["tb.x"], "1 ns")
    assert caught.value.code == "record_unavailable" and "\n" not in str(caught.value)


def test_it_is_a_triage_tool_for_waveform_records():
    spec = tools_of("triage")["waveform"]
    assert spec.record_fields == ("path",) and spec.record_kind == "waveform"


def test_the_docs_walkthrough_is_what_the_tool_returns(record):
    from pathlib import Path

    page = (Path(__file__).parents[3] / "docs" / "waveform.md").read_text()
    shown = page.split("```text\n")[1].split("```")[0].splitlines()
    excerpt = read(record, ["tb.dut.ready", "tb.dut.clk_en", "tb.cpu.*"], "265 ns", "10 ns")
    returned = [
        excerpt.summary,
        *(f"{line.number}: {line.text}" for line in excerpt.lines),
        *(f"unknown: {unknown}" for unknown in excerpt.unknowns),
    ]
    assert shown == returned


def test_a_waveform_over_its_kinds_cap_is_refused_at_admission(tmp_path, monkeypatch):
    from contract.errors import ManifestError
    from scenario import recordfile

    monkeypatch.setitem(recordfile.MAX_RECORD_BYTES, "waveform", 1 << 20)
    with pytest.raises(ManifestError, match="larger than 1 MiB, the limit for a waveform record"):
        one_record(tmp_path, "big.vcd", "waveform", write_vcd() + b" " * (1 << 20))
