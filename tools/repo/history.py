"""The pinned history of a repository record, and the points of it a call names.

Only commits reachable from the commit pinned at admission are history: a revision (a commit id,
tag or branch) that names another commit, such as one made after admission, is refused, as is a
name that is not found or a commit id prefix that two commits share.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from contract.codes import RefusalCode
from contract.errors import ManifestError, RecordRefusal
from scenario.reading import check_time
from scenario.registry import Record
from scenario.repository import open_repository
from tools.repo.args import HEX, point_time

if TYPE_CHECKING:
    from dulwich.objects import Commit, ObjectID
    from dulwich.repo import Repo

MAX_HISTORY = 200_000
"""Commits of the pinned history walked at most; an older one is out of reach."""
TIME_CHECK_EVERY = 512


@dataclass(frozen=True)
class History:
    """The pinned history: every commit reachable from the pinned HEAD, newest first."""

    repo: Repo
    commits: dict[bytes, Commit]
    """Commit id (hex, as bytes) → commit, in the walk's order (newest first)."""
    head: bytes

    def ancestors(self, start: bytes) -> set[bytes]:
        """`start` and every commit reachable from it."""
        seen, stack = set(), [start]
        while stack:
            sha = stack.pop()
            if sha in seen or sha not in self.commits:
                continue
            seen.add(sha)
            stack.extend(self.commits[sha].parents)
        return seen


@contextmanager
def pinned_history(record: Record) -> Iterator[History]:
    """The record's repository opened (its git folder still confined) and walked from the pinned
    HEAD; the repository closed after."""
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
        yield History(repo, _walk(repo, head), head)
    finally:
        repo.close()


def _walk(repo: Repo, head: ObjectID) -> dict[bytes, Commit]:
    """Every commit reachable from `head`, newest first (by commit time), within the call's time."""
    commits: dict[bytes, Commit] = {}
    for count, entry in enumerate(repo.get_walker(include=[head], max_entries=MAX_HISTORY)):
        if count % TIME_CHECK_EVERY == 0:
            check_time()
        commits[entry.commit.id] = entry.commit
    return commits


def resolve(history: History, text: str) -> bytes:
    """The commit a revision names within the pinned history: `HEAD` (the pinned commit), a tag,
    a branch, or a commit id (whole or a prefix of at least 7 hex digits); else a refusal."""
    if text == "HEAD":
        return history.head
    named = _named_ref(history.repo, text)
    if named is not None:
        if named not in history.commits:
            _refuse(f"{text!r} names commit {named[:12].decode()}, outside the pinned history")
        return named
    if HEX.fullmatch(text):
        found = [sha for sha in history.commits if sha.startswith(text.encode("ascii"))]
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


def between(history: History, since: str, until: str) -> list[Commit]:
    """The commits after `since` up to `until` (each a revision or a date), newest first."""
    since_time, until_time = point_time(since, until=False), point_time(until, until=True)
    reached = history.ancestors(resolve(history, until)) if until_time is None else None
    excluded = history.ancestors(resolve(history, since)) if since_time is None else set()
    return [
        commit
        for sha, commit in history.commits.items()
        if (reached is None or sha in reached)
        and sha not in excluded
        and (since_time is None or commit.commit_time > since_time)
        and (until_time is None or commit.commit_time <= until_time)
    ]
