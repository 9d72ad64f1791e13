"""Tools once running: the receipt's hash is of the bytes read, and no record holds a call past
its limits (a FIFO, a gzip bomb, a record too slow to read, the run's deadline)."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from contract.errors import ManifestError, RecordRefusal
from ledger.context import WarrantContext
from scenario.reading import open_record, reading
from scenario.registry import load_scenario
from tests.cli_process import warrant
from tests.helpers import call, run_embedded, stop, write_manifest


@dataclass(frozen=True)
class Tampering:
    """A chooser that does something to the records before it proposes (trusted test code)."""

    before_first: Callable[[], None]
    proposals: tuple[dict[str, Any], ...]
    actor: str = "chooser:test"

    def choose(self, view: Any) -> Any:
        if view.turn == 1:
            self.before_first()
        if view.turn <= len(self.proposals):
            return self.proposals[view.turn - 1]
        return stop()


def run_with(manifest: Path, chooser: Tampering) -> dict[str, Any]:
    return run_embedded(
        str(manifest), "tamper", context=WarrantContext(choosers={"tamper": chooser})
    )


def test_a_same_size_rewrite_with_the_old_mtime_is_refused_record_changed(scenario_dir):
    log = scenario_dir / "logs" / "t.log"
    manifest = write_manifest(scenario_dir)
    original = log.read_bytes()
    seen = log.stat()

    def forge() -> None:
        forged = b"FORGED" + original[6:]
        log.write_bytes(forged)
        os.utime(log, ns=(seen.st_atime_ns, seen.st_mtime_ns))
        assert log.stat().st_size == seen.st_size

    state = run_with(
        manifest, Tampering(forge, (call("c1", "searchlogs", path="cc/t.log", query="UVM"),))
    )
    [item] = state["evidence"]
    assert item["error"] == "record_changed"
    assert item["excerpt"] == [] and "FORGED" not in str(state["handover"])
    assert state["handover"]["status"] == "stopped"


@pytest.mark.parametrize("swapped", ["logs/t.log", "scenario.toml"])
def test_a_record_or_its_manifest_swapped_for_a_fifo_is_refused_at_once(scenario_dir, swapped):
    manifest = write_manifest(scenario_dir)

    def swap() -> None:
        (scenario_dir / swapped).unlink()
        os.mkfifo(scenario_dir / swapped)

    # Opening a FIFO waits for a writer that never comes: a run that ends at all was not held
    state = run_with(
        manifest, Tampering(swap, (call("c1", "searchlogs", path="cc/t.log", query="UVM"),))
    )
    [item] = state["evidence"]
    assert item["error"] == "record_unavailable" and "regular file" in item["summary"]


def test_a_hard_link_is_refused_at_load(scenario_dir):
    os.link(scenario_dir.parent / "secret.txt", scenario_dir / "logs" / "linked.log")
    manifest = write_manifest(
        scenario_dir, '[[record]]\nid = "x"\nkind = "log"\npath = "logs/linked.log"\n'
    )
    with pytest.raises(ManifestError, match="2 hard links"):
        load_scenario(manifest)


def gzip_bomb(path: Path, header: bytes, unpacked: int) -> None:
    block = b"0" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as out:
        out.write(header)
        for _ in range(unpacked >> 20):
            out.write(block)


def test_a_gzip_history_is_capped_on_what_it_unpacks(scenario_dir):
    history = scenario_dir / "bomb.csv"
    gzip_bomb(history, b"run,date,test,status\nA1,2026-01-01,fifo_smoke,FAIL,", 300 << 20)
    assert history.stat().st_size < 2 << 20
    manifest = write_manifest(
        scenario_dir, '[[record]]\nid = "bomb"\nkind = "history"\npath = "bomb.csv"\n'
    )
    state = run_with(
        manifest,
        Tampering(lambda: None, (call("c1", "getrunhistory", path="bomb", test="fifo_smoke"),)),
    )
    [item] = state["evidence"]
    assert item["error"] == "record_unavailable" and "more than 256 MiB" in item["summary"]


def test_a_read_past_the_calls_limit_is_cut(scenario_dir):
    history = scenario_dir / "big.csv"
    row = b"A2,2026-01-02,other_test,PASS\n"
    with history.open("wb") as out:
        out.write(b"run,date,test,status\n")
        for _ in range(60):
            out.write(row * 40_000)
    manifest = write_manifest(
        scenario_dir, '[[record]]\nid = "big"\nkind = "history"\npath = "big.csv"\n'
    )
    scenario = load_scenario(manifest)
    with (
        reading(0.0) as session,
        pytest.raises(RecordRefusal) as caught,
        open_record(scenario.records["big"]) as stream,
    ):
        while stream.read(1 << 16):
            pass
    assert caught.value.code == "tool_timeout" and session.opened


def test_a_call_that_starts_after_the_deadline_is_not_run_and_the_run_ends(scenario_dir):
    """The guard approved the call in time; by the time it runs, the deadline has passed."""
    manifest = write_manifest(scenario_dir)
    clock = {"now": 1_800_000_000.0, "reads_until_late": None}

    def read() -> float:
        if clock["reads_until_late"] is not None:
            clock["reads_until_late"] -= 1
            if clock["reads_until_late"] < 0:
                clock["now"] += 121  # past the manifest's 120 s deadline
                clock["reads_until_late"] = None
        return clock["now"]

    def after_the_guard() -> None:
        clock["reads_until_late"] = 1  # the guard's decision reads the clock in time

    chooser = Tampering(after_the_guard, (call("c1", "searchlogs", path="cc/t.log", query="UVM"),))
    context = WarrantContext(clock=read, choosers={"tamper": chooser})
    state = run_embedded(str(manifest), "tamper", context=context)
    [item] = state["evidence"]
    assert item["error"] == "deadline_passed" and item["excerpt"] == []
    assert state["handover"]["status"] == "deadline_passed"


def test_an_action_file_that_is_a_fifo_is_bad_input_at_once(tmp_path):
    fifo = tmp_path / "actions.jsonl"
    os.mkfifo(fifo)
    # nobody writes to it: a command that ends at all never waited on it
    result = warrant("run", "R42", "--chooser", f"file:{fifo}", "--db", "memory", cwd=tmp_path)
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("target", ["fifo", "folder", "missing/x.jsonl", "link"])
def test_a_cassette_path_that_cannot_be_written_is_bad_input_before_the_run(tmp_path, target):
    path = tmp_path / target
    if target == "fifo":
        os.mkfifo(path)
    elif target == "folder":
        path.mkdir()
    elif target == "link":
        path.symlink_to(tmp_path / "elsewhere.jsonl")
    result = warrant("run", "R42", "--db", "memory", "--record", str(path), cwd=tmp_path)
    assert (
        result.returncode == 2 and "--record" in result.stderr and "Traceback" not in result.stderr
    )
    assert not (tmp_path / "elsewhere.jsonl").exists()
