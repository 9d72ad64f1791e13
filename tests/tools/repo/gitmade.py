"""Repositories made in a test with dulwich's objects (no `git`, no work tree, no wall clock): each
commit's files as given, its dates fixed, so a test knows every commit's content."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

from dulwich.objects import Blob, Commit, Tag, Tree
from dulwich.repo import Repo

Files = dict[str, bytes]


def init(path: Path) -> Repo:
    path.mkdir(parents=True)
    return Repo.init(str(path))


def _tree(repo: Repo, files: Files) -> bytes:
    """The tree of `files` (paths with `/`), its subtrees stored too."""
    tree = Tree()
    folders: dict[str, Files] = {}
    for path, content in files.items():
        head, _, rest = path.partition("/")
        if rest:
            folders.setdefault(head, {})[rest] = content
        else:
            blob = Blob.from_string(content)
            repo.object_store.add_object(blob)
            tree.add(head.encode(), 0o100644, blob.id)
    for name, inner in folders.items():
        tree.add(name.encode(), 0o040000, _tree(repo, inner))
    repo.object_store.add_object(tree)
    return tree.id


def commit(
    repo: Repo, files: Files, message: str, when: str, parents: list[bytes], author: str = "Ada"
) -> bytes:
    """A commit of exactly `files`, at `when` (ISO, with its zone), on `parents`; not on a ref."""
    made = Commit()
    made.tree = _tree(repo, files)
    made.parents = parents
    made.author = made.committer = f"{author} <{author.lower()}@example.com>".encode()
    made.author_time = made.commit_time = int(datetime.fromisoformat(when).timestamp())
    made.author_timezone = made.commit_timezone = 0
    made.message = message.encode() + b"\n"
    repo.object_store.add_object(made)
    return made.id


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
