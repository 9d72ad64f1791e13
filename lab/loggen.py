"""Deterministic generator of UVM-style simulation logs.

Large logs are generated, never committed: tests and benchmarks call `write_log` with a size and a
seed and get the same bytes every time. Passing tests produce a clean report summary; a failing test
adds a reset-checker UVM_ERROR, an assertion failure and `TEST FAILED`.
"""

from __future__ import annotations

import argparse
import gzip
import random
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

_AGENTS = ("apb_agt", "axi_agt", "irq_agt", "dma_agt")
_IDS = ("APB", "AXI", "IRQ", "DMA", "SB", "COV")
_OPS = ("write", "read")


def _header(test: str, seed: int) -> list[str]:
    return [
        "Chronologic VCS simulator copyright 1991-2026",
        f"UVM_INFO @ 0: reporter [RNTST] Running test {test}_test...",
        f"UVM_INFO tb/env/soc_env.sv(61) @ 0: uvm_test_top.env [ENV] build_phase: seed={seed}",
    ]


def _traffic_line(rng: random.Random, time_ps: int) -> str:
    agent = rng.choice(_AGENTS)
    ident = rng.choice(_IDS)
    addr = rng.randrange(0, 1 << 16) * 4
    data = rng.randrange(0, 1 << 32)
    op = rng.choice(_OPS)
    return (
        f"UVM_INFO tb/agents/{agent}/monitor.sv({rng.randrange(40, 400)}) @ {time_ps}: "
        f"uvm_test_top.env.{agent}.mon [{ident}] {op} 0x{addr:08x} = 0x{data:08x}"
    )


def _failure(test: str, time_ps: int) -> list[str]:
    return [
        f'"tb/sva/reset_props.sv", 57: top.dut.u_rst_ctrl.a_clk_en_after_release: '
        f"started at {time_ps - 40000}ps failed at {time_ps}ps",
        "\tOffending '(clk_en == 1'b1)'",
        f"UVM_ERROR tb/checkers/reset_checker.sv(142) @ {time_ps}: uvm_test_top.env.rst_chk "
        f"[RST_CHK] {test}: clk_en not asserted within 4 cycles of synchronized reset release",
    ]


def _summary(test: str, seed: int, infos: int, errors: int) -> list[str]:
    verdict = "TEST FAILED" if errors else "TEST PASSED"
    return [
        "--- UVM Report Summary ---",
        f"UVM_INFO : {infos}",
        "UVM_WARNING :    0",
        f"UVM_ERROR : {errors:4d}",
        "UVM_FATAL :    0",
        f"{verdict}: {test}_test (seed {seed})",
    ]


def log_lines(test: str, seed: int, target_bytes: int, failing: bool = False) -> Iterator[str]:
    """Yield the lines of one simulation log of about `target_bytes` bytes."""
    rng = random.Random(f"{test}:{seed}")
    written = 0
    for line in _header(test, seed):
        written += len(line) + 1
        yield line
    time_ps, infos = 0, 0
    failure_at = target_bytes // 2 if failing else -1
    while written < target_bytes:
        time_ps += rng.randrange(1, 50) * 1000
        line = _traffic_line(rng, time_ps)
        infos += 1
        written += len(line) + 1
        yield line
        if 0 <= failure_at <= written:
            yield from _failure(test, time_ps)
            failure_at = -1
    yield from _summary(test, seed, infos, 1 if failing else 0)


def write_log(
    path: Path,
    target_bytes: int,
    *,
    test: str = "reset_smoke",
    seed: int = 1,
    failing: bool = False,
) -> Path:
    """Write a generated log (gzip-compressed when `path` ends in `.gz`) and return its path."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as out:
        _write_lines(out, log_lines(test, seed, target_bytes, failing))
    return path


def _write_lines(out: BinaryIO, lines: Iterator[str]) -> None:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= 4096:
            out.write(("\n".join(batch) + "\n").encode())
            batch.clear()
    if batch:
        out.write(("\n".join(batch) + "\n").encode())


def main() -> None:
    parser = argparse.ArgumentParser(description="Generate a deterministic UVM-style log.")
    parser.add_argument("path", type=Path)
    parser.add_argument("--bytes", type=int, default=100 * 1024 * 1024)
    parser.add_argument("--test", default="reset_smoke")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--failing", action="store_true")
    args = parser.parse_args()
    write_log(args.path, args.bytes, test=args.test, seed=args.seed, failing=args.failing)


if __name__ == "__main__":
    main()
