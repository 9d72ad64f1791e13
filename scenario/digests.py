"""Each record's sha256 computed once per content version, as git's index does.

A file's identity is what `fstat` says of it: device, inode, size, mtime and ctime. Admission hashes
a record and remembers its digest under that identity; a later read of the same identity in this
process trusts the digest instead of hashing the file again, and checks at its end that the
identity did not move while it read. Any write to the file moves its ctime, which no user can set
back, so a changed file is hashed again (and refused if its bytes differ).

A digest is remembered only when the file had been quiet for `QUIET_NS` before hashing began: a
write in the same timestamp tick as the hash would not move ctime (git's "racily clean" entries).
The memory is per process and bounded; a resumed run in a new process hashes in its read pass.

What this trusts, as git does: ctime as the kernel keeps it. A writer that holds the file mapped
shared and writes again into a page it already dirtied moves no timestamp until the kernel writes
that page back (seconds); a file system that does not keep ctime (some FUSE or network mounts)
never moves it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import NamedTuple

QUIET_NS = 1_000_000_000
"""A file changed less than this long before its hash began is never trusted by identity."""
REMEMBERED = 16_384
"""Digests kept (the oldest dropped first). A family tool trusts its members by this memory
(`tools.logs.familypool.members_of`), so one manifest's records, `registry.MAX_RECORDS` (10,000),
all fit, with room for a few more: an evicted member would be hashed again on every call."""


class FileIdentity(NamedTuple):
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


_KNOWN: OrderedDict[FileIdentity, str] = OrderedDict()
_WRITING = threading.Lock()
"""Parallel calls remember digests at once; reads need no lock."""


def identity_of(found: os.stat_result) -> FileIdentity:
    return FileIdentity(
        found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns
    )


def remember(before: FileIdentity, after: FileIdentity, sha256: str, hashed_from_ns: int) -> None:
    """Keep `sha256` for this identity if the file stood still while it was hashed (`before` and
    `after` were taken around the hash) and had been quiet before `hashed_from_ns`."""
    quiet_since = hashed_from_ns - QUIET_NS
    if before != after or max(before.mtime_ns, before.ctime_ns) >= quiet_since:
        return
    with _WRITING:
        _KNOWN[before] = sha256
        _KNOWN.move_to_end(before)
        while len(_KNOWN) > REMEMBERED:
            _KNOWN.popitem(last=False)


def known(identity: FileIdentity) -> str | None:
    """The digest remembered for exactly this identity, if any."""
    return _KNOWN.get(identity)


def forget_all() -> None:
    """Drop every remembered digest (tests, and a process that wants to hash again)."""
    with _WRITING:
        _KNOWN.clear()
