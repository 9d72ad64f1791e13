"""Rendering OpenSTA-style `report_checks` text, for the STA lab and for round-trip tests.

`render_path` writes one full path in the format `tools/sta/report.py` reads (Startpoint/Endpoint
with reasons, Path Group, Path Type, optional Mode and Corner, the Delay/Time/Description table,
arrival, required and slack).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PathSpec:
    startpoint: str
    endpoint: str
    start_reason: str
    end_reason: str
    group: str
    path_type: str
    arrival: float
    required: float
    mode: str | None = None
    corner: str | None = None
    stages: int = 0
    """Cells listed in the path's table between its launch and its endpoint."""
    pin: str | None = None
    """The endpoint's pin (`D`), named in its row as OpenSTA does (`reg3/D (DFF_X1)`)."""

    @property
    def endpoint_pin(self) -> str:
        """The endpoint as a reader should give it: the pin where the row names one."""
        return f"{self.endpoint}/{self.pin}" if self.pin else self.endpoint

    @property
    def slack(self) -> float:
        late = (
            self.required - self.arrival
            if self.path_type == "max"
            else self.arrival - self.required
        )
        return round(late, 2)


def render_path(path: PathSpec) -> str:
    lines = [
        f"Startpoint: {path.startpoint} ({path.start_reason})",
        f"Endpoint: {path.endpoint} ({path.end_reason})",
        f"Path Group: {path.group}",
        f"Path Type: {path.path_type}",
    ]
    lines += [f"Mode: {path.mode}"] if path.mode else []
    lines += [f"Corner: {path.corner}"] if path.corner else []
    status = "MET" if path.slack >= 0 else "VIOLATED"
    lines += [
        "",
        "  Delay    Time   Description",
        "---------------------------------------------------------",
        f"{0:7.2f} {0:7.2f}   clock {path.group} (rise edge)",
        *_stage_rows(path),
        f"{path.arrival:7.2f} {path.arrival:7.2f} ^ {_endpoint_row(path)}",
        f"        {path.arrival:7.2f}   data arrival time",
        "",
        f"        {path.required:7.2f}   data required time",
        "---------------------------------------------------------",
        f"        {path.required:7.2f}   data required time",
        f"        {-path.arrival:7.2f}   data arrival time",
        "---------------------------------------------------------",
        f"        {path.slack:7.2f}   slack ({status})",
        "",
    ]
    return "\n".join(lines) + "\n"


def _endpoint_row(path: PathSpec) -> str:
    return f"{path.endpoint}/{path.pin} (DFF_X1)" if path.pin else path.endpoint


def _stage_rows(path: PathSpec) -> list[str]:
    """One row per cell, times rising evenly to the arrival (as a real path lists its cells)."""
    step = path.arrival / (path.stages + 1)
    return [
        f"{step:7.2f} {step * index:7.2f} {'^v'[index % 2]} u_path/u_cell_{index}/Z (BUF_X1)"
        for index in range(1, path.stages + 1)
    ]


GROUPS = (("core_clk", 10.0), ("io_clk", 20.0), ("asynchronous", 10.0))
CORNERS = ("ss_0p72v_125c", "ff_0p88v_m40c")
FLOP = "rising edge-triggered flip-flop clocked by {clock}"
RECOVERY = "recovery check against rising-edge clock {clock}"


def report_pair(
    paths_per_group: int = 4, seed: int = 7, stages: int = 0
) -> tuple[list[PathSpec], list[PathSpec]]:
    """Before/after path lists: the after run has worse slacks, one endpoint flips MET → VIOLATED,
    one endpoint is removed and one added, and one startpoint changes."""
    import random

    rng = random.Random(seed)
    before: list[PathSpec] = []
    for corner in CORNERS:
        for group, period in GROUPS:
            for index in range(paths_per_group):
                clock = "core_clk" if group == "asynchronous" else group
                end_reason = (
                    RECOVERY.format(clock=clock)
                    if group == "asynchronous"
                    else FLOP.format(clock=clock)
                )
                arrival = round(rng.uniform(0.5, period * 0.8), 2)
                before.append(
                    PathSpec(
                        startpoint=f"u_{group}/src_reg[{index}]",
                        endpoint=f"u_{group}/dst_reg[{index}]",
                        start_reason=FLOP.format(clock=clock),
                        end_reason=end_reason,
                        group=group,
                        path_type="max",
                        arrival=arrival,
                        required=round(period - 0.05, 2),
                        corner=corner,
                        stages=stages,
                    )
                )
    after = [_worse(path, rng) for path in before]
    after[0] = _flip(after[0])
    after[1] = PathSpec(**{**after[1].__dict__, "startpoint": "u_core_clk/new_src_reg"})
    removed = after.pop(2)
    after.append(PathSpec(**{**removed.__dict__, "endpoint": "u_core_clk/added_reg[0]"}))
    return before, after


def _worse(path: PathSpec, rng) -> PathSpec:
    return PathSpec(**{**path.__dict__, "arrival": round(path.arrival + rng.uniform(0.0, 0.4), 2)})


def _flip(path: PathSpec) -> PathSpec:
    return PathSpec(**{**path.__dict__, "arrival": round(path.required + 0.25, 2)})


def write_report(target: Path, paths: list[PathSpec]) -> Path:
    """Write a report path by path (a large report is never held as one string)."""
    worst, tns = 0.0, 0.0
    with target.open("w", encoding="utf-8") as out:
        for path in paths:
            out.write(render_path(path))
            worst, tns = min(worst, path.slack), tns + min(path.slack, 0.0)
        out.write(f"tns {tns:.2f}\nwns {worst:.2f}\n")
    return target
