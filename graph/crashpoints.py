"""Test-only pause points, to crash a run at a named node boundary and prove recovery.

With `WARRANT_PAUSE_AT=before:guard@2` (or `after:execute@c2`, `before:handover`, …) in the
environment, the matching node writes the point's name to `WARRANT_PAUSE_FILE` and waits until a
file with the suffix `.release` appears next to it; a test kills the process meanwhile (`kill -9`) or
releases it. Points: `admit`, `choose@<turn it takes>`, `guard@<turn>`, `execute@<call id>`,
`handover`. `stored:<point>` pauses after a node's record was written to the store and before its
checkpoint is. `graph/build.py` calls `pause` around every node; without the variable it returns
at once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ledger.integrity import run_scope, thread_and_lane

POINT = "WARRANT_PAUSE_AT"
SIGNAL = "WARRANT_PAUSE_FILE"


def pause(when: str, name: str, state: dict[str, Any]) -> None:
    """Wait at `<when>:<point>` (`before`, `after`, or `stored`: after a node's record was written
    to the store and before its checkpoint) when it is the point asked for; else nothing."""
    point = os.environ.get(POINT)
    if point and point == f"{when}:{_key(name, state)}":
        _wait(point)


def _key(name: str, state: dict[str, Any]) -> str:
    """`guard@2`, `execute@c1`; inside a child, after its lane: `t2/execute@c1`."""
    lane = thread_and_lane(run_scope())[1]
    return f"{lane}/{_point(name, state)}" if lane else _point(name, state)


def _point(name: str, state: dict[str, Any]) -> str:
    if name == "choose":
        return f"choose@{state.get('turn', 0) + 1}"
    if name == "guard":
        return f"guard@{state.get('turn', 0)}"
    if name == "execute":
        return f"execute@{state['call']['id']}"
    return name


def _wait(point: str) -> None:
    signal = Path(os.environ[SIGNAL])
    signal.write_text(point)
    release = signal.with_name(signal.name + ".release")
    while not release.exists():
        time.sleep(0.05)
