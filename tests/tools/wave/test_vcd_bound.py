"""A VCD over the waveform tool's bound is refused in one line that names its size and the bound,
before its body is read; a VCD within it, and an FST of any size, are read. The sizes asserted are
the files' own, set here (a sparse file for the one over the real bound: no GiB is written)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contract.errors import RecordRefusal
from scenario.registry import Record, load_scenario
from tests.helpers import one_record
from tests.tools.wave.test_public_waveform import expected, vcd_changes
from tests.tools.wave.test_waveform import read, write_vcd
from tools.wave import values

DATA = Path(__file__).parents[2] / "data" / "waveforms"


def sized(folder: Path, size: int) -> Record:
    """A VCD admitted at `size` bytes: a real one, then NUL bytes (a hole) up to `size`, which its
    body's parser refuses: a read past the header would say so."""
    one_record(folder, "big.vcd", "waveform", write_vcd())
    os.truncate(folder / "big.vcd", size)
    return load_scenario(folder / "one.toml").records["r"]


def refusal(record: Record) -> RecordRefusal:
    with pytest.raises(RecordRefusal) as caught:
        read(record, ["tb.dut.clk_en"], "265 ns")
    return caught.value


def test_a_vcd_over_the_bound_is_refused_in_one_line_naming_its_size_and_the_bound(tmp_path):
    size = values.MAX_VCD_BYTES + 1
    refused = refusal(sized(tmp_path, size))
    assert refused.code == "record_unavailable" and "\n" not in str(refused)
    assert f"is a VCD of {size:,} bytes" in str(refused)
    assert f"over the {values.MAX_VCD_BYTES >> 20} MiB a waveform call reads" in str(refused)


def test_the_refusal_comes_before_the_body_is_read(tmp_path, monkeypatch):
    record = sized(tmp_path, 1 << 20)
    monkeypatch.setattr(values, "MAX_VCD_BYTES", (1 << 20) - 1)
    assert "a waveform call reads" in str(refusal(record))
    monkeypatch.setattr(
        values, "MAX_VCD_BYTES", 1 << 20
    )  # at the bound: read, and its body refused
    assert "cannot be read as VCD or FST" in str(refusal(record))


def test_a_vcd_at_the_bound_is_read_and_one_byte_less_refuses_it(tmp_path, monkeypatch):
    record = one_record(tmp_path, "sim.vcd", "waveform", write_vcd())
    size = (tmp_path / "sim.vcd").stat().st_size
    monkeypatch.setattr(values, "MAX_VCD_BYTES", size)
    assert read(record, ["tb.dut.ready"], "265 ns").lines[0].text == "t=265ns tb.dut.ready = 1 (at)"
    monkeypatch.setattr(values, "MAX_VCD_BYTES", size - 1)
    assert f"is a VCD of {size:,} bytes" in str(refusal(record))


def test_an_fst_is_not_bounded_by_it_while_its_vcd_is(tmp_path, monkeypatch):
    monkeypatch.setattr(values, "MAX_VCD_BYTES", 1)
    found = {}
    for filename in ("counter.fst", "counter.vcd"):
        folder = tmp_path / filename.replace(".", "_")
        folder.mkdir()
        record = one_record(folder, filename, "waveform", (DATA / filename).read_bytes())
        try:
            found[filename] = [
                line.text for line in read(record, ["t.clk"], "30 ns", "20 ns").lines
            ]
        except RecordRefusal as refused:
            found[filename] = str(refused)
    changes = vcd_changes((DATA / "counter.vcd").read_text())
    assert found["counter.fst"] == expected(changes["t.clk"], "t.clk", 1, 30, 20)
    assert "r is a VCD of" in found["counter.vcd"]
