"""A record family's members, kept where large values live: in the store, never in the run's state.

A manifest's `glob` may approve thousands of files, each a record of the grant (id, path, sha256,
identity). A grant in state is stored whole at every checkpoint that changes it, carried in each
`Send` to the executor, and sealed and checked at every step; so admission keeps each glob's
members apart (`kept_apart`): one store item per family, keyed by the sha256 of the members as
admitted (their `canonical` bytes: a content address, so an item is the same whoever wrote it,
and whenever), written in admission's own batch. The grant in state names each family's item
under `families_stored`, with where its members stand among the grant's records, and keeps the
other records; the ledger's `admitted` event still lists every record.

A node that needs the grant as admitted (the guard, the chooser's view, the handover) reads it
back with `full_grant` or `scenario_of`: the members from this process's cache, keyed by the same
digest (content-addressed: an entry cannot go stale), else read in one store batch and checked
against the digest; a run resumed in another process reads them once there. An item missing or
changed is `MembersMissing`: the store is not the run's own. A grant without `families_stored` (a
child's carved grant) is used as it is.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from guards.seal import canonical
from scenario.registry import Record, Scenario

FAMILIES = ("warrant", "families")
"""The store namespace of the members items, by digest (`ledger.store`'s root, `warrant`)."""
STORED = "families_stored"
"""The grant's field, in state, in place of `families`: glob → `{"members": digest, "at": n}`,
`at` the number of the grant's other records that come before the family's members."""
MAX_CACHED = 20_000
"""Members this process keeps read (twice the records one manifest may approve)."""


class MembersMissing(RuntimeError):
    """The store lacks a family's members that the run's grant names (a store not the run's own)."""


@dataclass(frozen=True)
class Members:
    """One family's members as admitted: the records as the grant holds them (JSON), in order."""

    records: tuple[dict[str, Any], ...]

    @functools.cached_property
    def ids(self) -> list[str]:
        return [record["id"] for record in self.records]

    @property
    def validated(self) -> tuple[Record, ...]:
        """As `Record`s, validated anew: kept, they would double what the cache holds, and the
        guard (once a turn) and the executor (once a call) use them only while they decide."""
        return tuple(Record.model_validate(record) for record in self.records)


def members_digest(records: Sequence[Mapping[str, Any]]) -> str:
    return hashlib.sha256(canonical(list(records))).hexdigest()


def kept_apart(grant: dict[str, Any]) -> tuple[dict[str, Any], list[PutOp]]:
    """The grant as the run's state keeps it, each glob's members out of its records, and the
    store writes of those members (remembered here too, for this process's nodes)."""
    families: dict[str, list[str]] = grant.get("families") or {}
    if not families:
        return grant, []
    owner = {record_id: glob for glob, ids in families.items() for record_id in ids}
    records = grant["records"]
    inline = {key: value for key, value in records.items() if key not in owner}
    at = _positions(records, owner)
    stored, puts = {}, []
    for glob, ids in families.items():
        members = [records[record_id] for record_id in ids]
        digest = members_digest(members)
        _remember(digest, Members(tuple(members)))
        stored[glob] = {"members": digest, "at": at[glob]}
        puts.append(PutOp(FAMILIES, digest, {"members": members}, index=False))
    return _replaced(grant, inline, STORED, stored), puts


def _positions(records: Iterable[str], owner: Mapping[str, str]) -> dict[str, int]:
    """Each family's place among the other records: how many come before its first member."""
    at: dict[str, int] = {}
    others = 0
    for record_id in records:
        glob = owner.get(record_id)
        if glob is None:
            others += 1
        else:
            at.setdefault(glob, others)
    return at


def full_grant(grant: Mapping[str, Any], store: BaseStore) -> dict[str, Any]:
    """The grant as admitted (`Scenario.model_dump(mode="json")`), its members read back."""
    if STORED not in grant:
        return dict(grant)
    found = _found(grant, store)
    pairs = {glob: zip(members.ids, members.records, strict=True) for glob, members in found}
    records = _ordered(grant["records"], grant[STORED], pairs)
    families = {glob: members.ids for glob, members in found}
    return _replaced(grant, records, "families", families, drop=STORED)


def scenario_of(grant: Mapping[str, Any], store: BaseStore) -> Scenario:
    """The grant as admitted, as the guard checks calls against it."""
    if STORED not in grant:
        return Scenario.model_validate(grant)
    found = _found(grant, store)
    own = Scenario.model_validate(_replaced(grant, grant["records"], "families", {}, drop=STORED))
    pairs = {glob: zip(members.ids, members.validated, strict=True) for glob, members in found}
    records = _ordered(own.records, grant[STORED], pairs)
    return own.model_copy(
        update={"records": records, "families": {glob: tuple(m.ids) for glob, m in found}}
    )


def family_records(store: BaseStore, digest: str) -> tuple[Record, ...] | None:
    """A family's members as admitted (the executor's), or None when the store lacks them."""
    found = members_of(store, [digest]).get(digest)
    return found.validated if found is not None else None


def with_members(store: BaseStore, values: Mapping[str, Any]) -> dict[str, Any]:
    """A run's values as readers show them: the grant as admitted, or as it is when the store
    lacks its members (a reader shows what it finds)."""
    grant = values.get("grant")
    if not isinstance(grant, Mapping) or STORED not in grant:
        return dict(values)
    try:
        return {**values, "grant": full_grant(grant, store)}
    except MembersMissing:
        return dict(values)


def stored_digests(grant: object) -> set[str]:
    """The members items a grant in state names (none for a grant kept whole): what retention
    (`ledger.persistence.retention`) keeps while the run is kept."""
    stored = grant.get(STORED) if isinstance(grant, Mapping) else None
    if not isinstance(stored, Mapping):
        return set()
    entries = [entry for entry in stored.values() if isinstance(entry, Mapping)]
    return {entry["members"] for entry in entries if isinstance(entry.get("members"), str)}


def members_of(store: BaseStore, digests: Sequence[str]) -> dict[str, Members]:
    """The members items found for `digests`: this process's, else read in one store batch and
    kept when their content has their digest."""
    found = {digest: cached for digest in digests if (cached := _cached(digest)) is not None}
    wanted = sorted(set(digests) - found.keys())
    if not wanted:
        return found
    read = store.batch([GetOp(FAMILIES, digest) for digest in wanted])
    for digest, item in zip(wanted, read, strict=True):
        records = item.value.get("members") if isinstance(item, Item) else None
        if isinstance(records, list) and members_digest(records) == digest:
            found[digest] = _remember(digest, Members(tuple(records)))
    return found


def _found(grant: Mapping[str, Any], store: BaseStore) -> list[tuple[str, Members]]:
    stored: Mapping[str, Mapping[str, Any]] = grant[STORED]
    found = members_of(store, [entry["members"] for entry in stored.values()])
    missing = [glob for glob, entry in stored.items() if entry["members"] not in found]
    if missing:
        raise MembersMissing(
            f"the store lacks the members of family {missing[0]!r} that the run's grant names"
        )
    return [(glob, found[entry["members"]]) for glob, entry in stored.items()]


def _ordered(
    own: Mapping[str, Any],
    stored: Mapping[str, Mapping[str, Any]],
    members: Mapping[str, Iterable[tuple[str, Any]]],
) -> dict[str, Any]:
    """The grant's records in their admitted order: each family's members (id and record, in
    order) put back at its place among the grant's own records."""
    others = list(own.items())
    records: dict[str, Any] = {}
    cut = 0
    for glob, entry in stored.items():
        records.update(others[cut : entry["at"]])
        cut = max(cut, entry["at"])
        records.update(members[glob])
    records.update(others[cut:])
    return records


def _replaced(
    grant: Mapping[str, Any],
    records: Mapping[str, Any],
    field: str,
    value: Any,
    drop: str = "families",
) -> dict[str, Any]:
    """The grant with its records and its `drop` field replaced (by `field`, in its place)."""
    return {
        (field if key == drop else key): (
            value if key == drop else records if key == "records" else kept
        )
        for key, kept in grant.items()
    }


# This process's members, by digest: content-addressed, so an entry is never stale; bounded.

_CACHE: OrderedDict[str, Members] = OrderedDict()
_LOCK = threading.Lock()


def _cached(digest: str) -> Members | None:
    with _LOCK:
        found = _CACHE.get(digest)
        if found is not None:
            _CACHE.move_to_end(digest)
        return found


def _remember(digest: str, members: Members) -> Members:
    with _LOCK:
        _CACHE[digest] = members
        _CACHE.move_to_end(digest)
        while len(_CACHE) > 1 and sum(len(m.records) for m in _CACHE.values()) > MAX_CACHED:
            _CACHE.popitem(last=False)
    return members


def forget_members() -> None:
    """Forget every family read (a test's new process)."""
    with _LOCK:
        _CACHE.clear()
