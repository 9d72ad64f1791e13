"""A record family's members are kept in the store, not in the run's state: what the checkpoints
hold after admission does not grow with the family, on the real SQLite saver.

The bound is computed from the raw folders, not from the code under test: a member kept in the
state adds at least its own id (its file name, from the folder's listing) to each checkpoint."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graph.build import compile_graph
from ledger.context import WarrantContext
from ledger.persistence.savers import open_run
from tests.helpers import stop

MANIFEST = """\
id = "FAM"
profile = "triage"
goal = "Which tests failed?"
[budget]
steps = 4
evidence = 2
deadline_s = 120
[[record]]
glob = "runs/*.log"
kind = "log"
[[record]]
id = "hist.csv"
kind = "history"
path = "hist.csv"
"""


def family(root: Path, count: int) -> Path:
    """A scenario folder of `count` tiny logs of equal-length names, approved by one glob, and
    a history: its manifest."""
    (root / "runs").mkdir(parents=True)
    for index in range(count):
        (root / "runs" / f"t{index:05d}.log").write_text(f"TEST PASSED {index}\n")
    (root / "hist.csv").write_text("run,date,test,status\nN1,2026-11-01,t00000,PASS\n")
    (root / "scenario.toml").write_text(MANIFEST)
    (root / "stop.jsonl").write_text(json.dumps(stop()) + "\n")
    return root / "scenario.toml"


def checkpoints_before_handover(db: Path, thread: str) -> list[int]:
    """The serialized size of the channel values of each checkpoint of `thread` taken before its
    handover (as the saver's serializer writes them: the checkpoint's own channel versions vary
    in length from run to run), and of the channel writes pending on it as the SQLite saver
    stored them (bytes). The handover's own writes are not counted: it names each approved record
    not examined, by design."""
    serde = JsonPlusSerializer()
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT checkpoint_id, type, checkpoint FROM checkpoints WHERE thread_id = ?"
            " ORDER BY checkpoint_id",
            (thread,),
        ).fetchall()
        writes = dict(
            connection.execute(
                "SELECT checkpoint_id, sum(length(value)) FROM writes WHERE thread_id = ?"
                " AND channel NOT IN ('handover', 'messages') GROUP BY checkpoint_id",
                (thread,),
            ).fetchall()
        )
    sizes = []
    for checkpoint_id, kind, blob in rows:
        values = serde.loads_typed((kind, blob))["channel_values"]
        if "handover" in values:
            break
        held = sum(len(serde.dumps_typed(value)[1]) for value in values.values())
        sizes.append(held + (writes.get(checkpoint_id) or 0))
    return sizes


def admitted_run(root: Path, count: int) -> list[int]:
    manifest = family(root, count)
    db = root / "runs.sqlite"
    with open_run(str(db), "fam") as storage:
        graph = compile_graph(*storage)
        graph.invoke(
            {"scenario": str(manifest), "chooser": f"file:{root / 'stop.jsonl'}"},
            {"configurable": {"thread_id": "fam"}},
            durability="sync",
            context=WarrantContext(clock=lambda: 1_800_000_000.0),
        )
    return checkpoints_before_handover(db, "fam")


def test_the_checkpoints_after_admission_do_not_grow_with_the_family(tmp_path):
    small = admitted_run(tmp_path / "a0010", 10)
    large = admitted_run(tmp_path / "a1000", 1000)
    one_member = min(len(path.name) for path in (tmp_path / "a1000" / "runs").iterdir())
    assert len(small) == len(large) >= 3  # admit, choose and guard at least
    for before, after in zip(small, large, strict=True):
        assert abs(after - before) < one_member, (small, large)
