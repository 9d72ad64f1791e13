"""triage and searchfamily read each member as a single-record tool reads a record: only the
version admitted (its pinned identity, then its sha256), within the call's time limit, a gzip
member's decompressed bytes capped; one member that fails any of these is that member's unknown
and the family is triaged from the rest. Ground truth: `triage_reference.py` over the raw files,
and sha256 computed here with hashlib over the files as written."""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

import pytest

from contract.codes import RefusalCode
from scenario import digests
from scenario import reading as records_reading
from scenario.digests import identity_of
from scenario.reading import ReadCut, reading
from scenario.registry import Record
from tests.hashing import CountingSha256
from tests.hashing import fresh_memory as fresh_memory  # autouse
from tests.tools.logs import triage_reference as reference
from tests.tools.logs.test_triage import PASSING_UVM, failing_uvm, family
from tools.logs import searchfamily, triage
from tools.logs.familypool import members_of, scan_family, shutdown_pools
from tools.logs.familyscan import scan_member
from tools.logs.memberfile import (
    CHANGED,
    NOT_ADMITTED,
    TIME_PASSED,
    Limits,
    Member,
    Unread,
    read_chunks,
)

CAP = 2500
"""A lowered cap on a gzip member's decompressed bytes: the generated family's gzip members
(about 3000 bytes each) go past it, `fifo_basic.log.gz` does not."""


@pytest.fixture
def counted() -> type[CountingSha256]:
    CountingSha256.hashed = 0
    return CountingSha256


def admitted(paths: dict[str, Path], root: Path) -> dict[str, Record]:
    """Each file as admission pins it: its sha256 (hashlib over its bytes), size, mtime, inode."""
    records = {}
    for name, path in paths.items():
        found = path.stat()
        records[name] = Record(
            id=name,
            kind="log",
            path=str(path),
            root=str(root),
            approval="none",
            share="any",
            sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
            size=found.st_size,
            mtime_ns=found.st_mtime_ns,
            inode=found.st_ino,
        )
    return records


def vouch(record: Record) -> None:
    """This process's digest memory holds the record's sha256 for its file as it is now, as
    admission leaves it for a file that had been quiet (hashed well after its last change)."""
    now = identity_of(os.stat(record.path))
    quiet = max(now.mtime_ns, now.ctime_ns) + 2 * digests.QUIET_NS
    digests.remember(now, now, record.sha256, quiet)


def rewrite_keeping_size_and_mtime(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    seen = path.stat()
    path.write_bytes(data.replace(old, new))
    os.utime(path, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        seen.st_size,
        seen.st_mtime_ns,
        seen.st_ino,
    )


def tampered_family(tmp_path: Path) -> tuple[dict[str, Path], dict[str, Record], dict[str, str]]:
    """The generated family, admitted; then four members changed behind the pin: one rewritten
    with its size and mtime restored, one appended to, one replaced by a symlink, one
    hard-linked. The files, the records, and each unread member's expected reason (the
    changed ones, and the family's binary member)."""
    paths = family(tmp_path, count=40)
    records = admitted(paths, tmp_path)
    plain = sorted(name for name in paths if name.endswith(".log") and "_000" in name)
    target, appended, symlinked, linked = plain[:4]
    rewrite_keeping_size_and_mtime(
        paths["dma_q2.log"], b"TEST FAILED: dma_q2", b"TEST PASSED: dma_q2"
    )
    with paths[appended].open("ab") as handle:
        handle.write(b"UVM_ERROR tb/x.sv(1) @ 9: top [LATE] written after admission\n")
    os.remove(paths[symlinked])
    os.symlink(paths[target], paths[symlinked])
    os.link(paths[linked], tmp_path / "elsewhere.log")
    reasons = {
        "blob.log": "is binary",
        "dma_q2.log": NOT_ADMITTED,
        appended: CHANGED,
        symlinked: "cannot be opened",
        linked: "has 2 hard links",
    }
    return paths, records, reasons


def reference_paths(paths: dict[str, Path], folder: Path, cap: int | None) -> dict[str, Path]:
    """Each member's text as the reference should read it: a gzip member past `cap`, its first
    `cap` decompressed bytes (written out plain)."""
    folder.mkdir()
    found = {}
    for name, path in paths.items():
        data = path.read_bytes()
        if cap is not None and data[:2] == b"\x1f\x8b" and len(gzip.decompress(data)) > cap:
            (folder / name).write_bytes(gzip.decompress(data)[:cap])
            found[name] = folder / name
        else:
            found[name] = path
    return found


def test_changed_members_are_unread_and_the_family_is_triaged_from_the_rest(tmp_path, monkeypatch):
    paths, records, reasons = tampered_family(tmp_path)
    good = {name: path for name, path in paths.items() if name not in reasons}
    changed = set(reasons) - {"blob.log"}
    for name in list(good)[::2]:  # half the members vouched for, half hashed
        vouch(records[name])
    members = members_of(records.values())
    assert {m.id for m in members if m.trusted} == set(list(good)[::2])
    found = scan_family(members, workers=1, limits=Limits(cap=CAP))
    unread = dict(found.unread)
    assert set(unread) == set(reasons)
    for name, why in reasons.items():
        assert unread[name].startswith(f"{name} ") and why in unread[name], unread[name]
    read = {name: path for name, path in paths.items() if name not in changed}
    want = reference.expected(reference_paths(read, tmp_path / "reference", CAP))
    statuses = {member: status for member, _, status in found.outcomes}
    assert statuses == {
        **{name: member.verdict for name, member in want.members.items()},
        **dict.fromkeys(changed, "unread"),
    }
    assert {bucket.signature: list(bucket.members) for bucket in found.buckets} == want.buckets
    capped = {
        name
        for name, path in good.items()
        if path.read_bytes()[:2] == b"\x1f\x8b" and len(gzip.decompress(path.read_bytes())) > CAP
    }
    assert capped and "fifo_basic.log.gz" not in capped
    assert {member for member, note in found.notes if "cap" in note} == capped
    assert all(
        note == f"decompressed past the cap of {CAP} bytes: read the first {CAP}"
        for member, note in found.notes
        if member in capped
    )
    monkeypatch.setattr(records_reading, "MAX_STREAMED_BYTES", CAP)  # the tool's cap, lowered
    with reading(3600):  # a time limit not reached: the same result, the call not cut
        shown = triage.run_family(list(records.values()), workers=1)
    for name in reasons:
        assert f"not read: {name} {reasons[name]}" in shown.summary
    assert f"decompressed past the cap of {CAP} bytes" in shown.summary


def test_searchfamily_reads_members_through_the_same_checks(tmp_path):
    paths, records, reasons = tampered_family(tmp_path)
    found = searchfamily.search_family(
        members_of(records.values()), "UVM_ERROR", limit=5, workers=1, limits=Limits(cap=CAP)
    )
    assert {member for member, _ in found.unread} == set(reasons)
    for member, why in found.unread:
        assert reasons[member] in why
    want = {}
    for name, path in reference_paths(paths, tmp_path / "reference", CAP).items():
        if name in reasons:
            continue
        data = path.read_bytes()
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        if b"\x00" not in data[:8192] and (count := data.count(b"UVM_ERROR")):
            want[name] = count  # at most one UVM_ERROR a line in this family
    assert dict(found.counts) == want
    assert any(f"the cap of {CAP} bytes" in note for _, note in found.notes)


def test_a_trusted_member_is_not_hashed_and_any_other_pinned_one_is_hashed_whole(tmp_path, counted):
    paths = family(tmp_path, count=20)
    records = admitted(paths, tmp_path)
    limits = Limits(sha256=counted)
    for record in records.values():
        vouch(record)
    trusted = members_of(records.values())
    assert all(member.trusted for member in trusted)
    by_trust = scan_family(trusted, workers=1, limits=limits)
    assert counted.hashed == 0
    digests.forget_all()
    hashed = members_of(records.values())
    assert not any(member.trusted for member in hashed)
    assert scan_family(hashed, workers=1, limits=limits) == by_trust
    assert counted.hashed == sum(path.stat().st_size for path in paths.values())  # gzip: raw
    counted.hashed = 0
    unpinned = [Member(name, str(path)) for name, path in paths.items()]
    assert scan_family(unpinned, workers=1, limits=limits) == by_trust
    assert counted.hashed == 0
    assert not by_trust.unread[1:] and by_trust.unread[0][0] == "blob.log"  # binary: its own


def test_a_member_appended_to_while_read_is_read_to_its_admitted_size(tmp_path, counted):
    log = tmp_path / "live.log"
    log.write_text(PASSING_UVM)
    (record,) = admitted({"live.log": log}, tmp_path).values()
    limits = Limits(sha256=counted)

    def appending(buffer: bytearray, count: int, last: bool) -> None:
        with log.open("a") as more:
            more.write("UVM_ERROR tb/x.sv(1) @ 9: top [LATE] written after open\n")

    for trusted in (False, True):
        if trusted:
            vouch(record)
        (member,) = members_of([record])
        assert (member.trusted is not None) == trusted
        counted.hashed = 0
        total, notes = read_chunks(member, appending, limits)
        assert total == record.size and counted.hashed == record.size  # trusted: moved, so hashed
        assert len(notes) == 1 and f"read up to {record.size} bytes" in notes[0]
        record = admitted({"live.log": log}, tmp_path)["live.log"]  # its new version, admitted


def test_a_trusted_member_overwritten_while_read_is_not_the_version_admitted(tmp_path):
    log = tmp_path / "dma.log"
    log.write_text(failing_uvm("dma", "0x4"))
    (record,) = admitted({"dma.log": log}, tmp_path).values()
    vouch(record)
    (member,) = members_of([record])
    assert member.trusted is not None

    def forging(buffer: bytearray, count: int, last: bool) -> None:
        with log.open("r+b") as handle:
            handle.write(b"UVM_WARN")  # over the first line's UVM_INFO: its bytes differ…
        with log.open("ab") as handle:
            handle.write(b"\n")  # …and its size moves, whatever the clock's granularity

    with pytest.raises(Unread, match="sha256 differs"):
        read_chunks(member, forging)
    # Rewritten whole, its size and mtime as pinned: hashed (nothing vouches for it; a vouching
    # memory would not either, its ctime having moved, were the test to wait for a clock tick).
    digests.forget_all()
    log.write_text(failing_uvm("dma", "0x4").replace("UVM_INFO", "UVM_WARN", 1))
    os.utime(log, ns=(record.mtime_ns, record.mtime_ns))
    (member,) = members_of([record])
    assert member.trusted is None
    scan = scan_member(member)
    assert scan.unread == f"dma.log {NOT_ADMITTED}"


@pytest.mark.parametrize("workers", [1, 2])
def test_past_the_time_limit_no_member_is_read_and_the_call_is_cut(tmp_path, workers):
    paths = family(tmp_path, count=24)
    records = list(admitted(paths, tmp_path).values())
    for record in records[::2]:
        vouch(record)
    try:
        with reading(-1.0):  # its time limit already passed
            found = scan_family(members_of(records), workers=workers)
            assert [status for _, _, status in found.outcomes] == ["unread"] * len(records)
            assert all(why == f"{member} {TIME_PASSED}" for member, why in found.unread)
            assert found.size == 0
            with pytest.raises(ReadCut) as cut:
                triage.run_family(records, workers=workers)
        assert cut.value.code == RefusalCode.TOOL_TIMEOUT
        with reading(-1.0, RefusalCode.DEADLINE_PASSED), pytest.raises(ReadCut) as cut:
            searchfamily.run_family(records, "UVM_ERROR", workers=workers)
        assert cut.value.code == RefusalCode.DEADLINE_PASSED
    finally:
        shutdown_pools()


def test_the_pool_reads_pinned_members_as_one_process_does(tmp_path):
    _, records, reasons = tampered_family(tmp_path)
    for record in list(records.values())[::3]:
        vouch(record)
    members = members_of(records.values())
    try:
        one = scan_family(members, workers=1, limits=Limits(cap=CAP))
        assert scan_family(members, workers=2, limits=Limits(cap=CAP)) == one
        assert {member for member, _ in one.unread} == set(reasons)
        every = list(records.values())  # the tools: members made as the pool takes them
        assert triage.run_family(every, workers=2) == triage.run_family(every, workers=1)
        assert searchfamily.run_family(every, "UVM_", workers=2) == searchfamily.run_family(
            every, "UVM_", workers=1
        )
    finally:
        shutdown_pools()
