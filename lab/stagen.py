"""Rendering OpenSTA-style `report_checks` text, for the STA lab and for round-trip tests.

`render_path` writes one full path in the format `tools/stareport.py` reads (Startpoint/Endpoint
with reasons, Path Group, Path Type, optional Mode and Corner, the Delay/Time/Description table,
arrival, required and slack).
"""

from __future__ import annotations

from dataclasses import dataclass


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
        f"{path.arrival:7.2f} {path.arrival:7.2f} ^ {path.endpoint}",
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
