"""The pinned history of a repository record, and the points of it a call names.

Only commits reachable from the commit pinned at admission are history: a revision (a commit id,
tag or branch) that names another commit, such as one made after admission, is refused, as is a
name that is not found or a commit id prefix that two commits share.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, cast

from contract.codes import RefusalCode
from contract.errors import ManifestError, RecordRefusal
from scenario.reading import check_time
from scenario.registry import Record
from scenario.repository import open_repository
from tools.repo.args import HEX, point_time

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Commit, ObjectID, ShaFile
    from dulwich.repo import Repo
    from dulwich.walk import Walker

MAX_HISTORY = 200_000
"""Commits of the pinned history walked at most; an older one is out of reach."""
TIME_CHECK_EVERY = 512


class Objects:
    """The repository's objects as one call reads them: the first `MAX_KEPT` commits and trees
    read are kept, so the walks, a commit's parent and consecutive commits' trees are unpacked
    once (a blob, read once, is not kept)."""

    def __init__(self, repo: Repo) -> None:
        self.store = repo.object_store
        self.kept: dict[bytes, ShaFile] = {}
        self.listed: dict[bytes, dict[bytes, tuple[int, ObjectID]]] = {}

    def __getitem__(self, sha: ObjectID) -> ShaFile:
        found = self.kept.get(sha)
        if found is None:
            found = self.store[sha]
            if found.type_num in KEPT_TYPES and len(self.kept) < MAX_KEPT:
                self.kept[sha] = found
        return found

    def entries(self, sha: ObjectID) -> dict[bytes, tuple[int, ObjectID]]:
        """A tree's entries by name, (mode, id) each; none if `sha` names another kind of
        object (as dulwich's tree diff reads it). Kept as the tree is."""
        from dulwich.objects import Tree

        found = self.listed.get(sha)
        if found is None:
            tree = self[sha]
            found = {name: tree[name] for name in tree} if isinstance(tree, Tree) else {}
            if len(self.listed) < MAX_KEPT:
                self.listed[sha] = found
        return found

    def blob_bytes(self, sha: ObjectID) -> bytes | None:
        """A blob's content, read without making a dulwich object of it; None if `sha` names
        another kind of object."""
        type_num, data = self.store.get_raw(sha)
        return data if type_num == BLOB_TYPE else None


BLOB_TYPE = 3
KEPT_TYPES = frozenset({1, 2})
"""Commits and trees (git's object type numbers)."""
MAX_KEPT = 8192
"""Objects kept per call: a walk over a long history keeps its newest commits, not all of them."""


@dataclass
class History:
    """The pinned history: the commits reachable from the pinned HEAD, walked newest first only as
    far as a question needs (a call about last night's commits reads last night's commits)."""

    repo: Repo
    head: bytes
    objects: Objects
    walk: Iterator[Commit] = field(init=False)
    """The walk from the pinned HEAD, by commit time, taken as far as asked so far."""
    seen: dict[bytes, Commit] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from dulwich.objects import ObjectID

        self.walk = (entry.commit for entry in self.walker([ObjectID(self.head)]))

    def reaches(self, sha: bytes) -> bool:
        """Whether `sha` is in the pinned history (the walk goes on until it is found or ends)."""
        for commit in self.walk:
            if len(self.seen) % TIME_CHECK_EVERY == 0:
                check_time()
            self.seen[commit.id] = commit
            if sha in self.seen:
                return True
        return sha in self.seen

    def commit(self, sha: bytes) -> Commit:
        from dulwich.objects import ObjectID

        return cast("Commit", self.objects[ObjectID(sha)])

    def walker(
        self,
        include: list[ObjectID],
        exclude: list[ObjectID] | None = None,
        since: int | None = None,
        until: int | None = None,
    ) -> Walker:
        """A walk by commit time (dulwich's, as `repo.get_walker` makes it) over this call's
        objects, parents read as the repository gives them (grafts, shallow commits)."""
        from dulwich.walk import Walker

        parents = self.repo.parents_provider()  # reads the shallow file once, not per commit
        return Walker(
            cast("BaseObjectStore", self.objects),
            include,
            exclude=exclude,
            since=since,
            until=until,
            max_entries=MAX_HISTORY,
            get_parents=lambda commit: parents.get_parents(commit.id, commit),
        )


@contextmanager
def pinned_history(record: Record) -> Iterator[History]:
    """The record's repository opened (its git folder still confined), its history walked from the
    pinned HEAD as questions need; the repository closed after."""
    from dulwich.objects import ObjectID

    where = f"record {record.id!r}"
    try:
        repo = open_repository(Path(record.path), Path(record.root), where)
    except ManifestError as exc:
        raise RecordRefusal(RefusalCode.RECORD_UNAVAILABLE, str(exc)) from None
    try:
        head = ObjectID(record.sha256.encode("ascii"))
        if head not in repo.object_store:
            raise RecordRefusal(
                RefusalCode.RECORD_CHANGED,
                f"{record.id} no longer holds its pinned commit {record.sha256[:12]}",
            )
        yield History(repo, head, Objects(repo))
    finally:
        repo.close()


def resolve(history: History, text: str) -> bytes:
    """The commit a revision names within the pinned history: `HEAD` (the pinned commit), a tag,
    a branch, or a commit id (whole or a prefix of at least 7 hex digits); else a refusal."""
    if text == "HEAD":
        return history.head
    named = _named_ref(history.repo, text)
    if named is not None:
        if not history.reaches(named):
            _refuse(f"{text!r} names commit {named[:12].decode()}, outside the pinned history")
        return named
    if HEX.fullmatch(text):
        found = [sha for sha in _commits_with_prefix(history, text) if history.reaches(sha)]
        if len(found) > 1:
            _refuse(f"commit id {text!r} is ambiguous in the pinned history: give more digits")
        if found:
            return found[0]
        _refuse(f"no commit {text!r} in the pinned history (HEAD {history.head[:12].decode()})")
    _refuse(f"no tag or branch {text!r} in the repository")


def _named_ref(repo: Repo, text: str) -> bytes | None:
    """The commit a tag or branch name points to (an annotated tag peeled), or None."""
    from dulwich.refs import Ref

    for prefix in ("refs/tags/", "refs/heads/", "refs/remotes/", "refs/"):
        ref = Ref((prefix + text).encode())
        try:
            sha = repo.refs[ref]
        except (KeyError, ValueError):
            continue
        try:
            return bytes(repo.get_peeled(ref))
        except (KeyError, ValueError):
            return bytes(sha)
    return None


def _refuse(detail: str) -> NoReturn:
    raise RecordRefusal(RefusalCode.INVALID_ARGUMENT, detail)


def _commits_with_prefix(history: History, prefix: str) -> list[bytes]:
    """The commit ids the object store holds that start with `prefix` (any commit, reachable or
    not: the caller asks)."""
    from dulwich.objects import Commit, ObjectID

    store = history.repo.object_store
    found = sorted({bytes(sha) for sha in store.iter_prefix(prefix.encode("ascii"))})
    return [sha for sha in found if isinstance(store[ObjectID(sha)], Commit)]


def between(history: History, since: str, until: str) -> list[Commit]:
    """The commits after `since` up to `until` (each a revision or a date), newest first: what
    `git log since..until` lists, walked from `until` only down to `since`."""
    from dulwich.objects import ObjectID

    since_time, until_time = point_time(since, until=False), point_time(until, until=True)
    top = ObjectID(resolve(history, until) if until_time is None else history.head)
    bottom = [ObjectID(resolve(history, since))] if since_time is None else []
    walker = history.walker([top], exclude=bottom, since=since_time, until=until_time)
    commits = []
    for count, entry in enumerate(walker):
        if count % TIME_CHECK_EVERY == 0:
            check_time()
        commit = entry.commit
        if (since_time is None or commit.commit_time > since_time) and (
            until_time is None or commit.commit_time <= until_time
        ):
            commits.append(commit)
    return commits
