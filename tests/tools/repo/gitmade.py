"""Repositories made in a test with dulwich's objects (no `git`, no work tree, no wall clock): each
commit's files as given, its dates fixed, so a test knows every commit's content."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dulwich.objects import Commit, Tag
from dulwich.repo import Repo

from lab.rtlgen import Files
from lab.rtlgen import commit as stored_commit


def init(path: Path) -> Repo:
    path.mkdir(parents=True)
    return Repo.init(str(path))


def commit(
    repo: Repo, files: Files, message: str, when: str, parents: list[bytes], author: str = "Ada"
) -> bytes:
    """A commit of exactly `files`, at `when` (ISO, with its zone), on `parents`; not on a ref."""
    return stored_commit(repo.object_store, files, message, when, parents, author)


def one_commit(path: Path, files: Files, when: str) -> bytes:
    """A repository at `path` whose `master` is one commit of `files` at `when`; its id."""
    repo = init(path)
    head = commit(repo, files, "one", when, [])
    repo.refs[b"refs/heads/master"] = head
    repo.close()
    return head


def tag(repo: Repo, name: str, target: bytes, annotated: bool = False) -> None:
    if not annotated:
        repo.refs[b"refs/tags/" + name.encode()] = target
        return
    made = Tag()
    made.name, made.object, made.message = name.encode(), (Commit, target), b"release\n"
    made.tagger, made.tag_time, made.tag_timezone = b"Ada <ada@example.com>", 0, 0
    repo.object_store.add_object(made)
    repo.refs[b"refs/tags/" + name.encode()] = made.id


def line_counts(old: bytes, new: bytes) -> tuple[int, int]:
    """Lines added and deleted, for files whose lines are all distinct: the multiset difference."""
    before, after = Counter(old.splitlines()), Counter(new.splitlines())
    return sum((after - before).values()), sum((before - after).values())


def changed(old: Files, new: Files) -> dict[str, tuple[int, int]]:
    """Each path whose content differs → (added, deleted) lines."""
    return {
        path: line_counts(old.get(path, b""), new.get(path, b""))
        for path in sorted(set(old) | set(new))
        if old.get(path) != new.get(path)
    }
