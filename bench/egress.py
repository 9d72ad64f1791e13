"""What the egress gate costs a model turn: one request assembled for a remote route (structural
withholding, then `guards.egress.gate` over the whole text) against the same request for a local
route (no withholding, no gate), measured in the same run, interleaved.

    .venv/bin/python bench/egress.py [--reps 20]

The view holds N evidence items of 40 log lines each, half of them from a `share = "local"` record.
Prints medians per request and their ratio, and the remote request's cost per 1,000 characters
of the request, for growing N. Run it on two checkouts back to back to compare the gate's cost.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nodes.choosers.projector import assemble
from nodes.choosers.route import Route
from nodes.choosers.view import make_view

GRANT = {"records": {"r/local": {"share": "local"}, "r/shared": {"share": "any"}}}
REMOTE = Route(model="m", locality="remote", context_tokens=10_000_000)
LOCAL = Route(model="m", locality="local", context_tokens=10_000_000)


def _item(n: int) -> dict[str, Any]:
    record = "r/local" if n % 2 else "r/shared"
    lines = [
        {
            "line": 10 * n + k,
            "text": f"UVM_ERROR tb/env_{n}.sv({k}) @ {k}0: env.agent{n} [CHK{n}] mismatch {n * 7919 + k:08x}",
        }
        for k in range(40)
    ]
    return {
        "ref": f"E{n}",
        "turn": n,
        "tool": "searchlogs",
        "record": record,
        "sha256": "0" * 64,
        "sources": [{"record": record}],
        "provenance": {  # as a receipt carries it (`guards.provenance`); older code ignores it
            "share": "local" if record == "r/local" else "any",
            "sources": [record],
            "local": [record] if record == "r/local" else [],
        },
        "truncated": False,
        "flags": [],
        "error": None,
        "summary": f"40 line(s) contain 'CHK{n}'",
        "excerpt": lines,
    }


def _view(count: int) -> Any:
    items = [_item(n) for n in range(1, count + 1)]
    return make_view(
        scenario="S",
        goal="Why did the nightly fail?",
        turn=count + 1,
        budget_left={"steps": 3, "evidence": 3, "seconds": 60},
        catalog=(),
        records=[{"id": "r/local", "kind": "log"}, {"id": "r/shared", "kind": "log"}],
        record=lambda: {"evidence": items, "refusals": [], "unknowns": []},
    )


def _median_ms(route: Route, count: int, reps: int) -> tuple[float, int]:
    times, chars = [], 0
    for _ in range(reps):
        view = _view(count)  # a fresh view: its record is read once, as in a run
        started = time.perf_counter()
        chars = len(assemble(view, GRANT, route).text)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, chars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    reps = parser.parse_args().reps
    print(
        "| evidence items | request chars (local route) | local route | remote route (withheld + gate) | ratio | remote, per 1,000 chars |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for count in (4, 16, 64):
        local_ms, chars = _median_ms(LOCAL, count, reps)
        remote_ms, _ = _median_ms(REMOTE, count, reps)
        print(
            f"| {count} | {chars:,} | {local_ms:.2f} ms | {remote_ms:.2f} ms"
            f" | {remote_ms / local_ms:.2f}× | {remote_ms / chars * 1000:.3f} ms |"
        )


if __name__ == "__main__":
    main()
