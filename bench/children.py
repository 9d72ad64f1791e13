"""Children vs main alone: a nightly regression of N failing tests, each with a large log.

The same calls (one `searchlogs` count per failing log) made two ways, on one SQLite file each:
main alone, four calls per turn (the most a turn may hold), and main delegating one child per
failing test, sixteen children per delegation (the most `children.max` allows), the children
running in parallel. Prints wall times and their ratio (children / main alone), and the
checkpoint bytes per step of each run. Logs are generated (lab/loggen.py) and deleted.

    .venv/bin/python -m bench.children --tests 50 --mb 50
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from graph.build import compile_graph
from lab.loggen import write_log
from ledger.context import WarrantContext
from ledger.persistence.savers import open_run
from nodes.choosers.view import ChooserView

PER_TURN, PER_DELEGATION = 4, 16


def manifest(folder: Path, tests: int, mb: int) -> Path:
    (folder / "logs").mkdir()
    records = ""
    for n in range(tests):
        write_log(folder / "logs" / f"t{n}.log", mb << 20, test=f"t{n}", seed=n, failing=True)
        records += f'[[record]]\nid = "t{n}.log"\nkind = "log"\npath = "logs/t{n}.log"\n'
    path = folder / "nightly.toml"
    path.write_text(
        f'id = "N"\nprofile = "triage"\ngoal = "bench"\n[budget]\nsteps = {4 * tests}\n'
        f"evidence = {tests}\ndeadline_s = 3600\ncall_s = 600\n[children]\nmax = 16\n{records}"
    )
    return path


def count(call_id: str, record: str) -> dict[str, Any]:
    return {"id": call_id, "name": "searchlogs", "args": {"path": record, "query": "UVM_ERROR"}}


@dataclass(frozen=True)
class Alone:
    tests: int
    actor: str = "chooser:bench"

    def choose(self, view: ChooserView) -> Any:
        first = (view.turn - 1) * PER_TURN
        if first >= self.tests:
            return {"summary": "done", "message": {"kind": "stop"}}
        calls = [
            count(f"c{n}", f"t{n}.log") for n in range(first, min(first + PER_TURN, self.tests))
        ]
        return {"summary": "counts", "tool_calls": calls}


@dataclass(frozen=True)
class Delegating:
    tests: int
    actor: str = "chooser:bench"

    def choose(self, view: ChooserView) -> Any:
        if view.goal.startswith("child "):
            record = view.records[0]["id"]
            if view.turn == 1:
                return {"summary": "count", "tool_calls": [count("c1", record)]}
            return {"summary": "done", "message": {"kind": "stop"}}
        first = (view.turn - 1) * PER_DELEGATION
        if first >= self.tests:
            return {"summary": "done", "message": {"kind": "stop"}}
        tasks = [
            {
                "id": f"k{n}",
                "goal": f"child {n}",
                "records": [f"t{n}.log"],
                "budget": {"steps": 2, "evidence": 1},
            }
            for n in range(first, min(first + PER_DELEGATION, self.tests))
        ]
        return {"summary": "delegate", "message": {"kind": "delegate", "tasks": tasks}}


def timed(path: Path, chooser: Any, db: Path) -> tuple[float, dict[str, Any]]:
    with open_run(str(db), "bench") as storage:
        graph = compile_graph(*storage)
        config = {"configurable": {"thread_id": "bench"}}
        started = time.perf_counter()
        graph.invoke(
            {"scenario": str(path), "chooser": "bench"},
            config,
            durability="sync",
            context=WarrantContext(choosers={"bench": chooser}),
        )
        elapsed = time.perf_counter() - started
        return elapsed, graph.get_state(config).values


def checkpoint_bytes(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        rows, size = conn.execute(
            "SELECT count(*), sum(length(checkpoint)) FROM checkpoints"
        ).fetchone()
    return rows, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=50)
    parser.add_argument("--mb", type=int, default=50, help="MiB per failing test's log")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="warrant-children-"))
    try:
        path = manifest(folder, options.tests, options.mb)
        table = Table("mode", "wall s", "evidence", "steps", "checkpoints", "bytes/checkpoint")
        results = {}
        for name, chooser in (
            ("main alone", Alone(options.tests)),
            ("children", Delegating(options.tests)),
        ):
            db = folder / f"{name.replace(' ', '_')}.sqlite"
            elapsed, values = timed(path, chooser, db)
            rows, size = checkpoint_bytes(db)
            results[name] = elapsed
            spent = values["turn"] + values["cursor"].get("child_turns", 0)
            table.add_row(
                name,
                f"{elapsed:.2f}",
                str(values["cursor"]["observations"]),
                str(spent),
                str(rows),
                f"{size // max(rows, 1)}",
            )
        console = Console()
        console.print(f"{options.tests} failing tests, {options.mb} MiB of log each")
        console.print(table)
        ratio = results["children"] / results["main alone"]
        console.print(f"children / main alone: {ratio:.2f}×")
        print(
            json.dumps({"ratio": round(ratio, 3), **{k: round(v, 3) for k, v in results.items()}})
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
