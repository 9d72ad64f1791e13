"""Test-only pause points, to crash a run at a named node boundary and prove recovery.

With `WARRANT_PAUSE_AT=before:guard@2` (or `after:execute@c2`, `before:handover`, …) in the
environment, the matching node writes the point's name to `WARRANT_PAUSE_FILE` and waits until a
file with the suffix `.release` appears next to it; a test kills the process meanwhile (`kill -9`) or
releases it. Points: `admit`, `choose@<turn it takes>`, `guard@<turn>`, `execute@<call id>`,
`handover`. `stored:<point>` pauses after a node's record was written to the store and before its
checkpoint is. Without the variable, nodes are not wrapped at all.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

POINT = "WARRANT_PAUSE_AT"
SIGNAL = "WARRANT_PAUSE_FILE"


def pausable(name: str, node: Callable[..., Any]) -> Callable[..., Any]:
    point = os.environ.get(POINT)
    if not point:
        return node

    @functools.wraps(node)
    def paused(state: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        key = _key(name, state)
        if point == f"before:{key}":
            _wait(point)
        result = node(state, *args, **kwargs)
        if point == f"after:{key}":
            _wait(point)
        return result

    return paused


def stored(name: str, state: dict[str, Any]) -> None:
    """The pause between a node's store writes and its checkpoint (`stored:<point>`)."""
    point = os.environ.get(POINT)
    if point and point == f"stored:{_key(name, state)}":
        _wait(point)


def _key(name: str, state: dict[str, Any]) -> str:
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
