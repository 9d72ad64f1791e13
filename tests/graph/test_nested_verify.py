"""A grandchild's receipt, handed up through its parent, is the one the grandchild executed: the
run's ledger verifies, and the receipt names the lane that executed it (`t1/g1`), not the lane
that passed it on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_process import warrant
from tests.ledger.persistence.test_prune_children import delegating


def test_a_grandchilds_receipt_verifies_and_names_the_lane_that_executed_it(tmp_path: Path) -> None:
    manifest = delegating(tmp_path / "kids", nested=True)
    db = str(tmp_path / "w.sqlite")
    started = warrant("run", str(manifest), "--thread", "deep", "--db", db, "--json", cwd=tmp_path)
    assert started.returncode == 3, started.stderr  # g1 waits for approval of b.log
    resumed = warrant("resume", "deep", "--approve", "--db", db, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    verified = warrant("events", "deep", "--verify", "--db", db, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "chain intact" in verified.stdout
    shown = warrant("show", "deep", "--json", "--db", db, cwd=tmp_path)
    lanes = {item["record"]: item["lane"] for item in json.loads(shown.stdout)["evidence"]}
    assert lanes == {"a.log": "t1", "c.log": "t1/g1", "b.log": "t1/g1"}
