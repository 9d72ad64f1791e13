"""`prune` sweeps the glob families' members items (`("warrant", "families")`) that no kept run
refers to, in the pass that sweeps the bodies: an item a kept run's grant names stays, whether
the run ended, shares the family with a run pruned, or waits for a person; the kept runs read their
handover as before and the waiting one resumes to its handover. On SQLite and PostgreSQL.

Ground truth is the store's raw table, read with plain SQL, and the families' folders: the item
of a family is the one whose members are the folder's files."""

from __future__ import annotations

import json
import sqlite3
from hashlib import sha256
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint

from ledger.members import FAMILIES, forget_members
from ledger.persistence.locations import is_postgres
from ledger.persistence.retention import last_activity, prune
from ledger.persistence.savers import open_saver
from tests.cli_process import warrant
from tests.helpers import RUNS_FAMILY, call, scenario_head, stop

FAMILY_PREFIX = "warrant.families"


def family(root: Path, name: str, count: int, gated: bool = False) -> tuple[Path, str]:
    """A folder of `count` logs approved by one glob (and, `gated`, a log each use of which waits
    for a person's approval), and a chooser that triages the family (after searching the gated
    log) and stops: (manifest, chooser)."""
    (root / "runs").mkdir(parents=True)
    for index in range(count):
        (root / "runs" / f"{name}{index:02d}.log").write_text(f"UVM_ERROR {name} {index}\n")
    gate = ""
    documents = [call("c2", "triage", family="runs/*.log"), stop()]
    if gated:
        (root / "gate.log").write_text("UVM_ERROR gate\n")
        gate = '[[record]]\nid = "gate.log"\nkind = "log"\npath = "gate.log"\napproval = "human"\n'
        documents.insert(0, call("c1", "searchlogs", path="gate.log", query="UVM_ERROR"))
    (root / "scenario.toml").write_text(
        scenario_head("FAM", "Which tests failed?", steps=4, evidence=4, deadline_s=600)
        + RUNS_FAMILY
        + gate
    )
    (root / "actions.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in documents))
    return root / "scenario.toml", f"file:{root / 'actions.jsonl'}"


def cli(db: str, cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """`warrant ARGS --db DB --json`: its exit code and its JSON."""
    done = warrant(*args, "--db", db, "--json", cwd=cwd)
    assert done.returncode in (0, 3), done.stderr
    return done.returncode, json.loads(done.stdout)


def family_items(db: str) -> dict[str, list[str]]:
    """Each members item in the store's table: its key, and its members' ids."""
    query = "SELECT key, value FROM store WHERE prefix = ?"
    if is_postgres(db):
        with psycopg.connect(db) as conn:
            rows = conn.execute(query.replace("?", "%s"), (FAMILY_PREFIX,)).fetchall()
    else:
        with sqlite3.connect(db) as conn:
            rows = conn.execute(query, (FAMILY_PREFIX,)).fetchall()
    values = {key: value if isinstance(value, dict) else json.loads(value) for key, value in rows}
    return {key: [member["id"] for member in value["members"]] for key, value in values.items()}


def listed(manifest: Path) -> tuple[str, ...]:
    """A family's record ids, from its folder's own listing."""
    return tuple(sorted(f"runs/{path.name}" for path in (manifest.parent / "runs").iterdir()))


def pruned_before(db: str, first: str, second: str, keep_latest: bool = False) -> list[str]:
    """`prune --older-than` with the cutoff halfway between two runs' last checkpoints, as the
    saver stamped them: the runs deleted."""
    with open_saver(db) as storage:
        last = last_activity(storage.saver)
        assert last[first] < last[second]
        days = (last[second] - last[first]) / 2 / 86400
        report = prune(storage, keep_latest=keep_latest, older_than_days=days, now=last[second])
    forget_members()  # the next reader reads the members from the store, as a new process
    return report.deleted


def test_prune_removes_exactly_the_family_no_kept_run_refers_to(db, tmp_path):
    (a, a_chooser), (b, b_chooser) = family(tmp_path / "a", "a", 5), family(tmp_path / "b", "b", 7)
    c, c_chooser = family(tmp_path / "c", "c", 3, gated=True)
    ran = {
        "one": cli(db, tmp_path, "run", str(a), "--chooser", a_chooser, "--thread", "one"),
        "two": cli(db, tmp_path, "run", str(b), "--chooser", b_chooser, "--thread", "two"),
        "three": cli(db, tmp_path, "run", str(a), "--chooser", a_chooser, "--thread", "three"),
        "asks": cli(db, tmp_path, "run", str(c), "--chooser", c_chooser, "--thread", "asks"),
    }
    assert {thread: code for thread, (code, _) in ran.items()} == {
        "one": 0,
        "two": 0,
        "three": 0,
        "asks": 3,
    }
    items = family_items(db)
    by_family = {tuple(ids): key for key, ids in items.items()}
    assert sorted(by_family) == sorted(listed(root) for root in (a, b, c))  # a's once
    shown = cli(db, tmp_path, "show", "three")[1]

    assert pruned_before(db, "one", "two") == ["one"]  # a's family: "three" still refers to it
    assert family_items(db) == items

    assert pruned_before(db, "two", "three", keep_latest=True) == ["two"]
    assert family_items(db) == {
        key: ids for key, ids in items.items() if key != by_family[listed(b)]
    }
    assert cli(db, tmp_path, "show", "three")[1] == shown
    assert cli(db, tmp_path, "show", "asks")[1] == ran["asks"][1]
    code, resumed = cli(db, tmp_path, "resume", "asks", "--approve")
    assert (code, resumed["status"]) == (0, "stopped")
    assert [item["tool"] for item in resumed["evidence"]] == ["searchlogs", "triage"]
    assert all(item["error"] is None for item in resumed["evidence"])
    assert family_items(db) == {
        key: ids for key, ids in items.items() if key != by_family[listed(b)]
    }


def grant_naming(digest: str) -> dict[str, Any]:
    """A grant as a run's state keeps it, its one family's members named by `digest`."""
    return {"records": {}, "families_stored": {"runs/*.log": {"members": digest, "at": 0}}}


def checkpoint(saver: Any, namespace: str, values: dict[str, Any]) -> Any:
    """A checkpoint of thread `t` in `namespace` holding `values`, through the saver's own `put`."""
    saved = empty_checkpoint()
    versions = {channel: saver.get_next_version(None, None) for channel in values}
    saved.update(channel_values=values, channel_versions=versions)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": namespace}}
    return saver.put(config, saved, {"source": "loop", "step": 1, "parents": {}}, versions)


def test_a_family_named_in_a_child_lane_or_a_pending_write_is_kept(db):
    """A grant kept in a subgraph's (a child lane's) latest checkpoint, or in a node's write saved
    on the latest checkpoint before the checkpoint that would hold it (a crash between the two),
    is a run's: its members item stays; the item no grant names goes."""
    digests = {name: sha256(name.encode()).hexdigest() for name in ("lane", "pending", "orphan")}
    with open_saver(db) as storage:
        for name, digest in digests.items():
            storage.store.put(FAMILIES, digest, {"members": [{"id": name}]}, index=False)
        root = checkpoint(storage.saver, "", {"goal": "g"})
        storage.saver.put_writes(root, [("grant", grant_naming(digests["pending"]))], "admit")
        checkpoint(storage.saver, "child:k1", {"grant": grant_naming(digests["lane"])})
        before = family_items(db)
        report = prune(storage, keep_latest=True, older_than_days=None, now=0.0)
    assert before == {digest: [name] for name, digest in digests.items()}
    assert report.families == 1
    assert family_items(db) == {
        digest: [name] for name, digest in digests.items() if name != "orphan"
    }
