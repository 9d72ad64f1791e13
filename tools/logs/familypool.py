"""A family's members scanned in parallel: its records made members (each with its admission pin),
read over a kept process pool, and folded as results arrive.

Members are scanned in parallel (`scan_family`: a process pool sized to the cores, chunks of
members), results kept per member small and folded as they arrive, so memory does not grow with
a member's size; the order is by member id, whatever the workers' order. A shard's
`FamilyResult` merges into the whole family's (`familyfold.merge`: associative, commutative, idempotent on a
member seen twice, but for the bytes read).

A record read as a member (`members_of`) carries its admission pin, and a worker reads it only as
the version admitted, within the call's limits (`session_limits`: the reading session's deadline,
the cap on decompressed bytes), or not at all (memberfile's "A pinned member"): one member that
changed, or was not read in time, is that member's unknown, never the family's end; a call past
its time limit is then cut as a whole (`tools/logs/triage.py`'s `run_family`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from functools import partial
from typing import TypeVar

from scenario import reading
from scenario.digests import identity_of, known
from scenario.registry import Record
from tools.logs.familyfold import FamilyResult, fold
from tools.logs.familyscan import Limits, Member
from tools.logs.junit import scan
from tools.workers import forkserver, without_main

SERIAL_BELOW = 16
"""Families smaller than this are scanned in the caller's process (a pool costs more)."""
T = TypeVar("T")
R = TypeVar("R")


_POOLS: dict[int, ProcessPoolExecutor] = {}


def pool(workers: int | None = None) -> Executor:
    """A process pool of `workers` (the cores by default), started once and kept: the next call
    finds its workers warm. Its workers are forks of the tools' forkserver (`tools/workers.py`),
    each started here, without the caller's main module."""
    count = workers or os.cpu_count() or 1
    found = _POOLS.get(count)
    if found is None:
        found = ProcessPoolExecutor(max_workers=count, mp_context=forkserver())
        with without_main():
            for _ in range(count):
                found.submit(int)  # a no-op: each submit starts one worker, now
        _POOLS[count] = found
    return found


def shutdown_pools() -> None:
    """Stop the kept pools (their workers and the thread that feeds them)."""
    while _POOLS:
        _, executor = _POOLS.popitem()
        executor.shutdown(wait=True)


Progress = Callable[[int, int], None]
"""Told `(done, total)` as members are read: a long family call shows it on the console."""


def parallel_map(
    work: Callable[[T], R],
    items: Sequence[T] | Iterator[T],
    workers: int | None = None,
    progress: Progress | None = None,
    *,
    total: int | None = None,
) -> Iterator[R]:
    """`work` over `items` in their order: in this process for a few, else in chunks of items
    over the pool (a few chunks per worker, so a slow member does not hold the rest back);
    `progress` told after each result. `items` may be an iterator (with `total`, their number):
    each chunk is then made as the pool takes it, while the workers read the chunks before."""
    if total is None:
        items = list(items)
        total = len(items)
    count = workers or os.cpu_count() or 1
    if total < SERIAL_BELOW or count == 1:
        results: Iterator[R] = map(work, items)
    else:
        chunk = max(1, math.ceil(total / (count * 8)))
        results = pool(count).map(work, items, chunksize=chunk)
    return results if progress is None else _told(results, total, progress)


def _told(results: Iterator[R], total: int, progress: Progress) -> Iterator[R]:
    for done, result in enumerate(results, 1):
        yield result
        progress(done, total)


def session_limits() -> Limits:
    """The current reading session's limits, for workers that have no session: its deadline
    (none outside a session), and `reading.MAX_STREAMED_BYTES` decompressed bytes a member."""
    return Limits(until=reading.deadline(), cap=reading.MAX_STREAMED_BYTES)


def scan_family(
    members: Sequence[Member],
    workers: int | None = None,
    limits: Limits | None = None,
    progress: Progress | None = None,
) -> FamilyResult:
    """Every member scanned (a shard: any subset), folded as results arrive, within `limits`
    (by default the current reading session's: `session_limits`)."""
    ordered = sorted(members, key=lambda member: member.id)
    return scan_members(iter(ordered), len(ordered), workers, limits, progress)


def scan_members(
    ordered: Iterator[Member],
    total: int,
    workers: int | None,
    limits: Limits | None,
    progress: Progress | None,
) -> FamilyResult:
    work = partial(scan, limits=session_limits() if limits is None else limits)
    return fold(parallel_map(work, ordered, workers, progress, total=total))


def members_of(records: Iterable[Record]) -> list[Member]:
    """Approved `log` records as family members, by id, each with its pin."""
    return list(iter_members(records))


def iter_members(records: Iterable[Record]) -> Iterator[Member]:
    """`members_of`, one member at a time (a stat each): a family tool hands them to the pool as
    they are made, so that the first members are read while the last are made."""
    return map(member_of, sorted(records, key=lambda record: record.id))


def member_of(record: Record) -> Member:
    """A record as a member: its pin, and the identity its file has now if this process's
    digest memory holds the record's sha256 for it (`Member.trusted`). Done here, in the main
    process: admission hashed the files here and the memory is here; a worker has none."""
    try:
        now = identity_of(os.stat(record.path, follow_symlinks=False))
    except OSError:
        trusted = None
    else:
        trusted = now if known(now) == record.sha256 else None
    return Member(
        record.id,
        record.path,
        sha256=record.sha256,
        size=record.size,
        mtime_ns=record.mtime_ns,
        inode=record.inode,
        trusted=trusted,
    )
