"""A generated nightly: a folder of simulation logs from one regression run, and its run history.

    python -m lab.nightly FOLDER [--logs 200] [--kb 200] [--seed 7]

writes `FOLDER/runs/N7/*.log` (`write_family`: lab/loggen.py's UVM traffic, as plain UVM, as a
Questa transcript with `# `, and Verilator- and cocotb-shaped logs; about 12% failing under a
handful of signatures whose numbers vary, a few cut before any verdict) and
`FOLDER/history/runs.csv` (`write_history`: the six nightlies before it, `N1`…`N6` on the six nights
before today's `N7`, of the same tests, in which the reset tests failed in the first with the reset
checker's message, so today's reset bucket is known and the others new, and every seventeenth test
flips between pass and fail). Today's folder is the night after the history's last, so that no
reader is told what a test did "last night" from a run dated after today's. Deterministic: the same
arguments write the same bytes. Tests and `bench/triage.py` generate their families here; the
README's nightly walkthrough starts with it.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import random
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

from lab.loggen import log_lines

BASES = (
    "reset_smoke",
    "reset_warm",
    "dma_burst",
    "irq_stress",
    "axi_rlast",
    "fifo_full",
    "apb_regs",
    "uart_loop",
)


def _uvm_failure(rng: random.Random, test: str, base: str, time_ps: int) -> list[str]:
    """A failure whose signature depends on the test's base, its numbers on the member."""
    if base.startswith("reset"):
        return [
            f'"tb/sva/reset_props.sv", 57: top.dut.u_rst_ctrl.a_clk_en: started at'
            f" {time_ps - 40000}ps failed at {time_ps}ps",
            f"UVM_ERROR tb/checkers/reset_checker.sv(142) @ {time_ps}: uvm_test_top.env.rst_chk"
            f" [RST_CHK] {test}: clk_en not asserted within {rng.choice((4, 8))} cycles of"
            " synchronized reset release",
        ]
    if base == "dma_burst":
        return [
            f"UVM_ERROR tb/env/scoreboard.sv(214) @ {time_ps}: uvm_test_top.env.sb [SB_MISMATCH]"
            f" {test}: read 0x{rng.randrange(1 << 20):08x} expected 0x{rng.randrange(1 << 32):08x}"
            f" got 0x{rng.randrange(1 << 32):08x} (burst {rng.randrange(16)} of 16)"
        ]
    if base == "axi_rlast":
        return [
            f"UVM_FATAL tb/agents/axi_agt/monitor.sv(301) @ {time_ps}: uvm_test_top.env.axi_agt.mon"
            f" [AXI_PROTO] RLAST asserted before beat {rng.randrange(1, 8)} of 8"
        ]
    return [
        f"UVM_ERROR tb/agents/irq_agt/driver.sv(88) @ {time_ps}: uvm_test_top.env.irq_agt.drv"
        f" [IRQ_TIMEOUT] {test}: irq {rng.randrange(32)} not acknowledged within 2000 ns"
    ]


def _uvm(rng: random.Random, test: str, base: str, size: int, outcome: str) -> Iterator[str]:
    seed = rng.randrange(1 << 24)
    infos = 0
    failed_at = size // 2 if outcome == "fail" else -1
    written = 0
    for line in log_lines(f"{test}", seed, size):
        if line.startswith("--- UVM Report Summary"):
            break
        written += len(line) + 1
        infos += line.startswith("UVM_INFO")
        yield line
        if 0 <= failed_at <= written:
            time_ps = int(line.split("@ ")[1].split(":")[0]) if "@ " in line else 1000
            yield from _uvm_failure(rng, test, base, time_ps)
            failed_at = -1
    if outcome == "none":  # cut before its summary: the run died
        return
    errors = int(outcome == "fail" and base != "axi_rlast")
    fatals = int(outcome == "fail" and base == "axi_rlast")
    yield from [
        "--- UVM Report Summary ---",
        "",
        "** Report counts by severity",
        f"UVM_INFO : {infos:4d}",
        "UVM_WARNING :    0",
        f"UVM_ERROR : {errors:4d}",
        f"UVM_FATAL : {fatals:4d}",
        f"{'TEST FAILED' if outcome == 'fail' else 'TEST PASSED'}: {test}_test (seed {seed})",
    ]


def _verilator(rng: random.Random, test: str, size: int, outcome: str) -> Iterator[str]:
    written, cycle = 0, 0
    yield f"- V e r i l a t i o n   R e p o r t: Verilator 5.020 2024-01-01 rev v5.020 ({test})"
    while written < size:
        cycle += rng.randrange(1, 20)
        line = (
            f"[{cycle * 10}] top.dut.u_fifo: {rng.choice(('push', 'pop'))}"
            f" data=0x{rng.randrange(1 << 32):08x} level={rng.randrange(16)}"
        )
        written += len(line) + 1
        yield line
    if outcome == "fail":
        yield (
            f"%Error: tb/fifo_tb.sv:{rng.choice((120, 131))}: Assertion failed in"
            f" TOP.fifo_tb.dut: fifo overflow at level {rng.randrange(16, 32)}"
        )
        yield "%Error: tb/fifo_tb.sv:140: Verilog $stop"
        return
    yield "*-* All Finished *-*"
    if outcome == "pass":
        yield "TEST PASSED"


def _cocotb(rng: random.Random, test: str, size: int, outcome: str) -> Iterator[str]:
    written, now = 0, 0.0
    yield f"     0.00ns INFO     cocotb.gpi                         running {test}"
    while written < size:
        now += rng.randrange(1, 40) * 10
        line = (
            f"{now:10.2f}ns INFO     cocotb.uart_tb                     sent"
            f" 0x{rng.randrange(256):02x} baud={rng.choice((9600, 115200))}"
        )
        written += len(line) + 1
        yield line
    if outcome == "none":
        return
    if outcome == "fail":
        yield (
            f"{now:10.2f}ns ERROR    cocotb.regression                  {test} failed:"
            f" AssertionError: rx byte 0x{rng.randrange(256):02x} != tx byte"
            f" 0x{rng.randrange(256):02x} at {now:.2f}ns"
        )
    failed = int(outcome == "fail")
    yield f"** TESTS=1 PASS={1 - failed} FAIL={failed} SKIP=0 **"


def member_lines(index: int, size: int, seed: int = 7) -> tuple[str, Iterator[str]]:
    """The `index`-th member's test name and lines (deterministic in `index` and `seed`)."""
    rng = random.Random(f"family:{seed}:{index}")
    base = BASES[index % len(BASES)]
    test = f"{base}_{index:05d}"
    draw = rng.random()
    outcome = "fail" if draw < 0.12 else "none" if draw < 0.15 else "pass"
    kind = rng.choices(("uvm", "questa", "verilator", "cocotb"), (50, 20, 15, 15))[0]
    if kind == "verilator":
        return test, _verilator(rng, test, size, outcome)
    if kind == "cocotb":
        return test, _cocotb(rng, test, size, outcome)
    lines = _uvm(rng, test, base, size, outcome)
    if kind == "questa":
        return test, (f"# {line}" if line else "#" for line in lines)
    return test, lines


def write_family(
    folder: Path, count: int, member_bytes: int, *, seed: int = 7, gzip_every: int = 0
) -> list[Path]:
    """Write `count` logs of about `member_bytes` each into `folder` (every `gzip_every`-th one
    gzip-compressed, as `.log.gz`); their paths, sorted."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        test, lines = member_lines(index, member_bytes, seed)
        packed = gzip_every and index % gzip_every == gzip_every - 1
        path = folder / (f"{test}.log.gz" if packed else f"{test}.log")
        data = ("\n".join(lines) + "\n").encode()
        if packed:
            path.write_bytes(gzip.compress(data, mtime=0))
        else:
            path.write_bytes(data)
        paths.append(path)
    return sorted(paths)


EARLIER = 6
"""The nightlies in the history, `N1`…`N6`; today's is the next, `runs/N7`."""
TODAY = f"N{EARLIER + 1}"
FIRST_NIGHT = date(2026, 11, 19)
"""`N1`'s date; `N{k}` is k-1 nights later (today's, `N7`, is 2026-11-25)."""


def write_history(path: Path, tests: list[str], runs: int = EARLIER) -> Path:
    """Earlier nightlies `N1`…`N{runs}` of `tests`, one night apart: the reset tests failed in
    N1 with the reset checker's message as the signature cell; every seventeenth test
    alternates."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        rows = csv.writer(handle)
        rows.writerow(["run", "date", "test", "status", "signature"])
        for run in range(1, runs + 1):
            for index, test in enumerate(tests):
                flips = index % 17 == 0 and run % 2 == 0
                reset = test.startswith("reset") and run == 1
                failed = flips or reset
                cell = "clk_en not asserted within 8 cycles of synchronized reset release"
                rows.writerow(
                    [
                        f"N{run}",
                        (FIRST_NIGHT + timedelta(days=run - 1)).isoformat(),
                        test,
                        "FAIL" if failed else "PASS",
                        cell if reset else "",
                    ]
                )
    return path


def write_nightly(
    folder: Path, logs: int = 200, member_bytes: int = 200_000, seed: int = 7
) -> None:
    """A nightly's logs under `runs/N7/` (today) and its history under `history/` (the nights
    before)."""
    paths = write_family(folder / "runs" / TODAY, logs, member_bytes, seed=seed)
    tests = [path.name.removesuffix(".gz").removesuffix(".log") for path in paths]
    write_history(folder / "history" / "runs.csv", tests)


def main() -> None:
    parser = argparse.ArgumentParser(description="Generate a nightly's logs and run history.")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--logs", type=int, default=200, help="How many logs (default 200).")
    parser.add_argument("--kb", type=int, default=200, help="Each log's size in KB (default 200).")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    write_nightly(args.folder, args.logs, args.kb * 1000, args.seed)
    print(
        f"wrote {args.logs} logs under {args.folder / 'runs' / TODAY} and {args.folder / 'history' / 'runs.csv'}"
    )


if __name__ == "__main__":
    main()
