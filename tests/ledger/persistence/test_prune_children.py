"""`prune` and a delegating run's child lanes: deleting a run deletes every lane of its record (its
children's and theirs, which live under hashed lanes of their own) and no other thread's, not even
one whose id starts with the same characters; keeping a run keeps the bodies its children's own
receipts refer to, before they are handed to it (a child waiting for a person). On SQLite and
PostgreSQL.

Ground truth is the store's raw table, read with plain SQL, grouped by lane label; a run's labels
are computed here from its thread id and its children's lanes as the record's layout defines them
(the thread id itself when plain, else `~` and the first 40 hex digits of the sha256 of the thread
id, a NUL and the lane), and an excerpt's lines from the log's own text."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from hashlib import sha256
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lab import LAB_DIR
from ledger.persistence.locations import is_postgres
from tests.cli_process import warrant
from tests.ledger.persistence.test_prune_families import cli, pruned_before

R44_TWO_CHILDREN = f"file:{LAB_DIR / 'choosers' / 'r44_delegate.jsonl'}"
RUNS = "warrant.runs."


def labels(thread: str, *lanes: str) -> set[str]:
    """The lane labels of a run's record: its own (a plain thread id) and its children's."""
    hashed = {"~" + sha256(f"{thread}\x00{lane}".encode()).hexdigest()[:40] for lane in lanes}
    return {thread, *hashed}


def run_rows(db: str) -> dict[str, dict[tuple[str, str], Any]]:
    """Every item under `("warrant", "runs")` in the store's table, by lane label: (kind, key) →
    value."""
    query = "SELECT prefix, key, value FROM store WHERE prefix LIKE 'warrant.runs.%'"
    if is_postgres(db):
        with psycopg.connect(db) as conn:
            rows = conn.execute(query.replace("%", "%%")).fetchall()
    else:
        with sqlite3.connect(db) as conn:
            rows = conn.execute(query).fetchall()
    found: dict[str, dict[tuple[str, str], Any]] = {}
    for prefix, key, value in rows:
        label, kind = prefix.removeprefix(RUNS).split(".")
        found.setdefault(label, {})[(kind, key)] = (
            value if isinstance(value, dict) else json.loads(value)
        )
    return found


def test_deleting_a_delegating_run_deletes_its_childrens_lanes_and_no_other_threads(db, tmp_path):
    for thread in ("r44", "r44x"):  # "r44" is the start of "r44x"
        code, handover = cli(
            db, tmp_path, "run", "R44", "--chooser", R44_TWO_CHILDREN, "--thread", thread
        )
        assert (code, [child["lane"] for child in handover["children"]]) == (0, ["t1", "t2"])
    deleted, kept = labels("r44", "t1", "t2"), labels("r44x", "t1", "t2")
    before = run_rows(db)
    assert set(before) == deleted | kept  # every lane holds items; there is no other
    assert all(("evidence", "E1") in before[label] for label in deleted | kept)
    shown = cli(db, tmp_path, "show", "r44x")[1]

    assert pruned_before(db, "r44", "r44x") == ["r44"]

    assert run_rows(db) == {label: before[label] for label in kept}
    assert cli(db, tmp_path, "show", "r44x")[1] == shown
    assert warrant("events", "r44x", "--verify", "--db", db, cwd=tmp_path).returncode == 0


def search(call_id: str, path: str) -> str:
    """A scripted document (TOML) searching one log for UVM_ERROR."""
    call = f'{{ id = "{call_id}", name = "searchlogs", args = {{ path = "{path}", query = "UVM_ERROR" }} }}'
    return f"tool_calls = [{call}]"


def delegate(*tasks: tuple[str, list[str], int, int]) -> str:
    """A scripted document (TOML) delegating (id, records, steps, evidence) tasks."""
    tables = [
        f'{{ id = "{task_id}", goal = "{task_id}", records = {json.dumps(records)},'
        f" budget = {{ steps = {steps}, evidence = {evidence} }} }}"
        for task_id, records, steps, evidence in tasks
    ]
    return f'message = {{ kind = "delegate", tasks = [{", ".join(tables)}] }}'


STOP = 'message = { kind = "stop", text = "done" }'


def delegating(root: Path, nested: bool = False) -> Path:
    """A scenario whose run delegates t1 (a.log, then the gated b.log: it waits for a person's
    approval) and t2 (c.log); `nested`: main delegates t1 alone, which reads a.log, then delegates
    g1, which reads c.log and then the gated b.log."""
    root.mkdir(parents=True, exist_ok=True)
    logs = {
        "a.log": "start\nUVM_ERROR alpha one\nok\nUVM_ERROR alpha two\n",
        "b.log": "UVM_ERROR beta\n",
        "c.log": "fine\nUVM_ERROR gamma\n",
    }
    for name, text in logs.items():
        (root / name).write_text(text)
    records = "".join(
        f'[[record]]\nid = "{name}"\nkind = "log"\npath = "{name}"\n'
        + ('approval = "human"\n' if name == "b.log" else "")
        for name in logs
    )
    if nested:
        main = delegate(("t1", ["a.log", "b.log", "c.log"], 6, 3))
        children = [("t1", search("c1", "a.log"))]
        children += [("t1", delegate(("g1", ["b.log", "c.log"], 3, 2)))]
        children += [("g1", search("c1", "c.log")), ("g1", search("c2", "b.log"))]
    else:
        main = delegate(("t1", ["a.log", "b.log"], 3, 2), ("t2", ["c.log"], 2, 1))
        children = [("t1", search("c1", "a.log")), ("t1", search("c2", "b.log"))]
        children += [("t2", search("c1", "c.log"))]
    children += [(task, STOP) for task in ("t1", "t2", "g1")]
    scripts = "".join(
        f'[[children.script]]\ntask = "{task}"\nsummary = "{task}"\n{document}\n'
        for task, document in children
    )
    header = textwrap.dedent(f"""\
        id = "KIDS"
        profile = "triage"
        goal = "What do the logs show?"
        [budget]
        steps = 12
        evidence = 6
        deadline_s = 3600
        [children]
        max = 2
        depth = {2 if nested else 1}
        """)
    script = "".join(f'[[script]]\nsummary = "main"\n{document}\n' for document in (main, STOP))
    (root / "kids.toml").write_text(header + records + script + scripts)
    return root / "kids.toml"


def matching(root: Path, record: str) -> list[tuple[int, str]]:
    """The lines of a log a search for UVM_ERROR shows, numbered from 1, from the log's text."""
    lines = (root / record).read_text().splitlines()
    return [(number, text) for number, text in enumerate(lines, 1) if "UVM_ERROR" in text]


@pytest.mark.parametrize("nested", [False, True], ids=["child", "grandchild"])
def test_a_kept_run_whose_child_waits_for_a_person_keeps_its_childrens_bodies(db, tmp_path, nested):
    manifest = delegating(tmp_path / "kids", nested)
    code, waiting = cli(db, tmp_path, "run", str(manifest), "--thread", "kids")
    [pending] = waiting["pending"]
    assert (code, pending["lane"]) == (3, "t1/g1" if nested else "t1")

    prune = warrant("prune", "--keep-latest", "--db", db, "--json", cwd=tmp_path)
    assert prune.returncode == 0, prune.stderr

    code, resumed = cli(db, tmp_path, "resume", "kids", "--approve")
    assert (code, resumed["status"]) == (0, "stopped")
    shown = [
        (item["lane"], item["record"], [(line["line"], line["text"]) for line in item["excerpt"]])
        for item in resumed["evidence"]
    ]
    lanes = ["t1", "t1/g1", "t1/g1"] if nested else ["t1", "t1", "t2"]  # g1's name g1's lane
    records = ["a.log", "c.log", "b.log"] if nested else ["a.log", "b.log", "c.log"]
    assert shown == [
        (lane, record, matching(manifest.parent, record))
        for lane, record in zip(lanes, records, strict=True)
    ]
    assert not [item["ref"] for item in resumed["evidence"] if item.get("body_missing")]
    assert json.loads(prune.stdout)["bodies_removed"] == 0  # every body is a kept run's


def test_deleting_a_run_deletes_its_grandchilds_lane(db, tmp_path):
    manifest = delegating(tmp_path / "kids", nested=True)
    for thread in ("deep", "deeper"):
        assert cli(db, tmp_path, "run", str(manifest), "--thread", thread)[0] == 3
    deleted, kept = labels("deep", "t1", "t1/g1"), labels("deeper", "t1", "t1/g1")
    before = run_rows(db)
    assert set(before) == deleted | kept

    assert pruned_before(db, "deep", "deeper") == ["deep"]

    assert run_rows(db) == {label: before[label] for label in kept}
