"""searchfamily: `searchlogs` over every member of a record family — per-member counts of the
matching lines (counted to the end of every member) and the first hits, in member order.

Each member goes through `searchlogs`' own scan (`tools.logs.logscan.search`: Hyperscan, a
fixed string or a regular expression, one hit per line), read as `triage` reads it
(`tools/logs/memberfile.py`: gzip read through to the cap, a binary member refused as that
member's unknown, a growing one read to its size at open, and said; a pinned member read only as
the version admitted, proven by its sha256, within the call's time limit). Members run in the same process pool as
`triage`. A member's result holds its count and at most `limit` hits; `merge` keeps the first
`limit` hits of the family (by member id, then line) and every member's count, so shards merge
into exactly the whole family's result, in any grouping and order. What was counted but not
shown is said: the hits past the limit, and the members past `MAX_MEMBERS` named.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from scenario import reading
from scenario.registry import Record
from tools.excerpt import Excerpt, make_excerpt, make_line
from tools.logs.familypool import Progress, iter_members, parallel_map, session_limits
from tools.logs.familyscan import Cited
from tools.logs.logscan import Search, search
from tools.logs.memberfile import (
    BINARY_PROBE,
    GZIP_MAGIC,
    NO_LIMITS,
    Capped,
    Limits,
    Member,
    MemberFile,
    Unread,
)
from tools.stream.patterns import Pattern

MAX_MEMBERS = 50
"""Members named with their counts; the rest are counted together."""


@dataclass(frozen=True)
class MemberHits:
    member: str
    matching: int = 0
    """Matching lines, counted to the end of the member."""
    hits: tuple[Cited, ...] = ()
    """Its first `limit` matching lines."""
    unread: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FamilyHits:
    """Every member's count (members with no match counted, not named), and the family's first
    `limit` hits; each field in a canonical order (`merge`)."""

    limit: int
    members: int = 0
    counts: tuple[tuple[str, int], ...] = ()
    """(member, matching lines) of the members with a match, sorted by member."""
    hits: tuple[Cited, ...] = ()
    """The first `limit` hits, by member then line."""
    unread: tuple[tuple[str, str], ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    searched: tuple[str, ...] = ()
    """Every member searched (so that a member merged twice counts once)."""

    @property
    def matching(self) -> int:
        return sum(count for _, count in self.counts)


@contextmanager
def open_text(
    member: Member, limits: Limits = NO_LIMITS
) -> Iterator[tuple[io.BufferedIOBase, list[str]]]:
    """A member's text as a stream, read as `triage` reads it (`memberfile.MemberFile`: to its
    size at open, or its pinned size and proven the version admitted; decompressed if gzip, to
    the cap), and the notes on its reading (filled when the block ends). Raises `Unread`."""
    with MemberFile(member, limits) as (source, notes):
        plain = io.BufferedReader(source, 1 << 20)
        stream: io.BufferedIOBase = plain
        if plain.peek(2)[:2] == GZIP_MAGIC:
            unpacked = Capped(gzip.GzipFile(fileobj=plain), limits.cap, notes)
            stream = io.BufferedReader(unpacked, 1 << 20)
        try:
            head = stream.peek(BINARY_PROBE)[:BINARY_PROBE]  # type: ignore[attr-defined]
        except (OSError, EOFError) as error:
            raise Unread(f"is not a readable gzip file ({error})") from None
        if b"\x00" in head:
            raise Unread(f"is binary (a NUL byte in its first {BINARY_PROBE} bytes): not read")
        yield stream, notes


def search_member(
    member: Member, pattern: Pattern, limit: int, limits: Limits = NO_LIMITS
) -> MemberHits:
    """One member searched to its end; an unreadable one (or one not the version admitted, or
    not read in time) returned with the reason."""
    try:
        with open_text(member, limits) as (stream, notes):
            try:
                found = search(stream, Search(pattern, limit, count=True))
            except (OSError, EOFError) as error:
                raise Unread(f"could not be read to its end ({error})") from None
    except Unread as why:
        return MemberHits(member.id, unread=f"{member.id} {why}")
    hits = tuple(
        Cited(member.id, number, found.lines[number].text) for number in found.hits[:limit]
    )
    return MemberHits(member.id, found.matching, hits, notes=tuple(notes))


def fold(limit: int, results: Iterable[MemberHits | FamilyHits]) -> FamilyHits:
    """Member results and shard results as one (associative, order-independent)."""
    counts: dict[str, int] = {}
    searched: set[str] = set()
    hits: set[Cited] = set()
    unread: dict[str, str] = {}
    notes: set[tuple[str, str]] = set()
    for result in results:
        if isinstance(result, MemberHits):
            searched.add(result.member)
            if result.matching:
                counts[result.member] = result.matching
            hits.update(result.hits)
            if result.unread:
                unread[result.member] = result.unread
            notes.update((result.member, note) for note in result.notes)
        else:
            searched.update(result.searched)
            counts.update(result.counts)
            hits.update(result.hits)
            unread.update(result.unread)
            notes.update(result.notes)
        if len(hits) > 4 * limit:  # keep the first ones only, as they come
            hits = set(sorted(hits)[:limit])
    return FamilyHits(
        limit=limit,
        members=len(searched),
        counts=tuple(sorted(counts.items())),
        hits=tuple(sorted(hits)[:limit]),
        unread=tuple(sorted(unread.items())),
        notes=tuple(sorted(notes)),
        searched=tuple(sorted(searched)),
    )


def merge(results: Iterable[FamilyHits]) -> FamilyHits:
    """Shards' results as one (each must have been made with the same `limit`)."""
    shards = list(results)
    limit = min((shard.limit for shard in shards), default=1)
    return fold(limit, shards)


def search_family(
    members: Sequence[Member],
    query: str,
    regex: bool = False,
    limit: int = 20,
    workers: int | None = None,
    limits: Limits | None = None,
    progress: Progress | None = None,
) -> FamilyHits:
    """Every member searched (any subset: a shard), in the pool, within `limits` (by default
    the current reading session's: `familypool.session_limits`)."""
    ordered = sorted(members, key=lambda member: member.id)
    return _search(iter(ordered), len(ordered), query, regex, limit, workers, limits, progress)


def _search(
    ordered: Iterator[Member],
    total: int,
    query: str,
    regex: bool,
    limit: int,
    workers: int | None,
    limits: Limits | None,
    progress: Progress | None,
) -> FamilyHits:
    work = partial(
        search_member,
        pattern=Pattern(query, regex),
        limit=limit,
        limits=session_limits() if limits is None else limits,
    )
    return fold(limit, parallel_map(work, ordered, workers, progress, total=total))


def summarize(found: FamilyHits, query: str, regex: bool) -> str:
    what = f"/{query}/" if regex else repr(query)
    verb = "match" if regex else "contain"
    matched = len(found.counts)
    parts = [
        f"{found.matching} line(s) in {matched} of {found.members} member(s) {verb} {what}"
        " (counted to the end of every member)"
    ]
    if found.matching > len(found.hits):
        parts.append(
            f"the first {len(found.hits)} are shown, {found.matching - len(found.hits)} counted"
            " and not shown"
        )
    named = ", ".join(f"{member} {count}" for member, count in found.counts[:MAX_MEMBERS])
    if named:
        parts.append(f"per member: {named}")
    if matched > MAX_MEMBERS:
        rest = found.counts[MAX_MEMBERS:]
        parts.append(
            f"{len(rest)} more member(s) match ({sum(count for _, count in rest)} lines),"
            " counted, not named"
        )
    for _, why in found.unread[:MAX_MEMBERS]:
        parts.append(f"not read: {why}")
    if len(found.unread) > MAX_MEMBERS:
        parts.append(f"{len(found.unread) - MAX_MEMBERS} more member(s) not read")
    for member, note in found.notes[:MAX_MEMBERS]:
        parts.append(f"{member} {note}")
    return "; ".join(parts)


def excerpt(found: FamilyHits, query: str, regex: bool) -> Excerpt:
    """The summary and the first hits, each `member:line: text`, numbered with its line."""
    lines = [make_line(hit.number, f"{hit.member}:{hit.number}: {hit.text}") for hit in found.hits]
    truncated = (
        found.matching > len(found.hits)
        or len(found.counts) > MAX_MEMBERS
        or len(found.unread) > MAX_MEMBERS
    )
    unknowns = [
        f"what {member} holds: it {why.removeprefix(member).strip()}"
        for member, why in found.unread[:MAX_MEMBERS]
    ]
    if len(found.unread) > MAX_MEMBERS:
        unknowns.append(f"what {len(found.unread) - MAX_MEMBERS} more unread member(s) hold")
    if found.matching > len(found.hits):
        unknowns.append(
            f"the text of {found.matching - len(found.hits)} matching line(s) counted, not shown"
        )
    return make_excerpt(summarize(found, query, regex), lines, truncated, unknowns)


def run_family(
    members: Sequence[Record],
    query: str,
    regex: bool = False,
    limit: int = 20,
    workers: int | None = None,
    progress: Progress | None = None,
) -> Excerpt:
    """The tool's body for approved records (the catalog's wiring names the family's records):
    each member read within the session's limits and proven the version admitted; a call past
    its time limit is cut as a whole (`ReadCut`, the session's code), as a single record's is."""
    found = _search(
        iter_members(members), len(members), query, regex, limit, workers, None, progress
    )
    reading.check_time()
    return excerpt(found, query, regex)
