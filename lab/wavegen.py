"""The lab's waveform of R42's failing test, `lab/runs/R42/reset_smoke.vcd`, written here.

It tells the same story as `reset_smoke.log`: a 10 ns clock, `rst_n` low from 5 ns and released at
205 ns, the synchronizer's second stage high at 225 ns, the checker's 4-cycle limit passed at
265 ns with `clk_en` still low, and `clk_en` high at 285 ns. The file is committed; this script
says how it was made (`python -m lab.wavegen` rewrites it, byte for byte the same).
"""

from __future__ import annotations

from lab import LAB_DIR

WAVEFORM = LAB_DIR / "runs" / "R42" / "reset_smoke.vcd"
END_PS = 400_000
PERIOD_PS = 10_000

# (identifier code, type, width, name): top.dut.u_rst_ctrl's ports and state.
SIGNALS = (
    ("!", "wire", 1, "clk"),
    ('"', "wire", 1, "rst_n"),
    ("#", "wire", 1, "pll_locked"),
    ("$", "reg", 1, "rst_sync_n"),
    ("%", "reg", 2, "state"),
    ("&", "reg", 3, "lock_cnt"),
    ("'", "wire", 1, "clk_en"),
)

CHANGES: dict[int, dict[str, str]] = {
    0: {'"': "1", "#": "0", "$": "0", "%": "b0", "&": "b0", "'": "0"},
    5_000: {'"': "0"},
    150_000: {"#": "1"},
    205_000: {'"': "1"},
    225_000: {"$": "1"},
    235_000: {"%": "b1"},
    245_000: {"&": "b1"},
    255_000: {"&": "b10"},
    265_000: {"&": "b11"},
    275_000: {"&": "b100"},
    285_000: {"%": "b10", "'": "1"},
}
"""Each time (ps) → the signals that change then (besides the clock): the controller counts four
locked cycles in WAIT_LOCK (state 1) before RUN (state 2) raises `clk_en`."""


def _value(code: str, value: str) -> str:
    return f"{value} {code}" if value.startswith("b") else f"{value}{code}"


def vcd_text() -> str:
    """The whole file: header, initial values, then each time's changes in order."""
    lines = [
        "$date Nov 27 02:14 2026 $end",
        "$version VCS U-2026.03 $end",
        "$timescale 1ps $end",
        "$scope module top $end",
        "$scope module dut $end",
        "$scope module u_rst_ctrl $end",
        *(
            f"$var {kind} {width} {code} {name}{f' [{width - 1}:0]' if width > 1 else ''} $end"
            for code, kind, width, name in SIGNALS
        ),
        "$upscope $end",
        "$upscope $end",
        "$upscope $end",
        "$enddefinitions $end",
    ]
    for time in range(0, END_PS + 1, PERIOD_PS // 2):
        changes = dict(CHANGES.get(time, {}))
        changes["!"] = "1" if time % PERIOD_PS == PERIOD_PS // 2 else "0"
        lines.append(f"#{time}")
        if time == 0:
            lines.append("$dumpvars")
        lines.extend(_value(code, value) for code, value in sorted(changes.items()))
        if time == 0:
            lines.append("$end")
    return "\n".join(lines) + "\n"


def main() -> None:
    WAVEFORM.write_text(vcd_text(), encoding="ascii")


if __name__ == "__main__":
    main()
