"""A record's sha256 is computed once per content version: admission remembers it under the
file's identity, a read of that identity does not hash again, and any write is still caught."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from contract.errors import ManifestError, RecordRefusal
from scenario import digests
from scenario.digests import FileIdentity, identity_of, known, remember
from scenario.reading import open_record, reading
from scenario.registry import Record, load_scenario
from tests.hashing import CountingSha256
from tests.hashing import fresh_memory as fresh_memory  # autouse
from tools.logs import searchlogs
from tools.logs.searchlogs import SearchLogsArgs

LINES = b"".join(b"UVM_INFO a.sv(%d) @ %d: env [X] line %06d\n" % (n, n, n) for n in range(4000))
NAMES = ("hashed_once", "rewritten", "changed_while_read", "new_process")


def after_a_tick(folder: Path, since_ns: int) -> None:
    """Return once the file system's clock is past `since_ns`, so that a write now moves a file's
    ctime beyond it: a probe file in `folder` is touched until its ctime has moved (one timestamp
    tick, a few milliseconds), for 5 s at most."""
    probe, bound = folder / ".tick", time.monotonic() + 5
    while True:
        probe.touch()
        if probe.stat().st_ctime_ns > since_ns:
            return
        assert time.monotonic() < bound, "the file system's clock did not move in 5 s"
        time.sleep(0.001)


@pytest.fixture(scope="module")
def written_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One log per test, written once, and left alone for a timestamp tick."""
    root = tmp_path_factory.mktemp("quiet")
    logs = {}
    for name in NAMES:
        (root / name).mkdir()
        (root / name / "m.toml").write_text(
            'id = "Q"\nprofile = "triage"\n[[record]]\nid = "log"\nkind = "log"\npath = "q.log"\n'
        )
        logs[name] = root / name / "q.log"
        logs[name].write_bytes(LINES)
    after_a_tick(root, max(log.stat().st_ctime_ns for log in logs.values()))
    return logs


@pytest.fixture
def quiet_logs(written_logs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The logs, quiet: with `QUIET_NS` at 0, a file is quiet when it has not changed since the
    file system's clock last ticked before its hash began (waiting out the real second is no
    part of these tests; the rule itself is tested on identities below)."""
    monkeypatch.setattr(digests, "QUIET_NS", 0)
    return written_logs


def admitted(log: Path) -> Record:
    return load_scenario(log.parent / "m.toml").records["log"]


def search(record: Record, query: str = "line 003999") -> Any:
    with reading(None) as session:
        excerpt = searchlogs.run(SearchLogsArgs(path="log", query=query, limit=1), {"path": record})
        session.verify()
    return excerpt


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[CountingSha256]:
    CountingSha256.hashed = 0
    monkeypatch.setattr("scenario.reading.hashlib", SimpleNamespace(sha256=CountingSha256))
    return CountingSha256


def test_a_quiet_record_is_hashed_at_admission_and_not_again_when_searched(quiet_logs, counted):
    record = admitted(quiet_logs["hashed_once"])
    assert known(identity_of(os.stat(record.path))) == record.sha256
    assert record.inode == os.stat(record.path).st_ino
    excerpt = search(record)
    assert [line.number for line in excerpt.lines] == [4000]
    assert counted.hashed == 0


def test_a_record_rewritten_after_admission_with_its_old_mtime_is_refused(quiet_logs):
    log = quiet_logs["rewritten"]
    record = admitted(log)
    seen = log.stat()
    after_a_tick(log.parent, seen.st_ctime_ns)  # as any later write is
    with log.open("r+b") as handle:
        handle.write(b"FORGED")
    os.utime(log, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert (log.stat().st_size, log.stat().st_mtime_ns) == (seen.st_size, seen.st_mtime_ns)
    with pytest.raises(RecordRefusal) as refused:
        search(record)
    assert refused.value.code == "record_changed"


def test_a_remembered_record_changed_while_it_is_read_is_refused(quiet_logs):
    log = quiet_logs["changed_while_read"]
    record = admitted(log)
    seen = log.stat()
    with pytest.raises(RecordRefusal) as refused, reading(None) as session:
        with open_record(record) as stream:
            assert stream.read(10)
            after_a_tick(log.parent, seen.st_ctime_ns)
            with log.open("r+b") as handle:
                handle.seek(len(LINES) - 6)
                handle.write(b"FORGED")
            os.utime(log, ns=(seen.st_atime_ns, seen.st_mtime_ns))
        session.verify()
    assert refused.value.code == "record_changed" and "while it was read" in str(refused.value)


def test_a_new_process_hashes_in_its_read_pass_once(quiet_logs, counted):
    record = admitted(quiet_logs["new_process"])
    digests.forget_all()  # as a run resumed by another process finds it
    search(record, query="line 000001")
    assert counted.hashed == len(LINES)  # the first lines read, then the rest: once in all
    search(record, query="line 000002")
    assert counted.hashed == len(LINES)  # the verified read remembered it


def test_a_fresh_file_is_not_trusted_by_identity(scenario_dir):
    record = load_scenario(_manifest(scenario_dir)).records["x"]
    assert known(identity_of(os.stat(record.path))) is None


def _manifest(root: Path) -> Path:
    manifest = root / "m.toml"
    manifest.write_text(
        'id = "M"\nprofile = "triage"\n[[record]]\nid = "x"\nkind = "log"\npath = "logs/t.log"\n'
    )
    return manifest


def test_a_file_that_changes_while_it_is_admitted_is_refused(scenario_dir, monkeypatch):
    log = scenario_dir / "logs" / "t.log"
    real = hashlib.file_digest

    def growing(handle: Any, name: str) -> Any:
        with log.open("ab") as more:
            more.write(b"UVM_INFO appended while hashed\n")
        return real(handle, name)

    monkeypatch.setattr("scenario.registry.hashlib.file_digest", growing)
    with pytest.raises(ManifestError, match="changed while it was admitted"):
        load_scenario(_manifest(scenario_dir))


def identity(**changes: int) -> FileIdentity:
    return FileIdentity(1, 2, 3, 10, 10)._replace(**changes)


def test_a_digest_is_kept_only_for_a_file_quiet_before_and_still_while_hashed():
    start = 10 + digests.QUIET_NS + 1
    remember(identity(), identity(size=4), "moved", start)
    remember(identity(inode=7), identity(inode=7), "recent", start - 1)
    remember(identity(inode=8), identity(inode=8), "quiet", start)
    assert known(identity()) is None and known(identity(inode=7)) is None
    assert known(identity(inode=8)) == "quiet"


def test_the_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(digests, "REMEMBERED", 3)
    for inode in range(5):
        remember(identity(inode=inode), identity(inode=inode), str(inode), digests.QUIET_NS * 2)
    assert [known(identity(inode=n)) for n in range(5)] == [None, None, "2", "3", "4"]
