"""`treediff.file_changes` against dulwich's own `tree_changes` (as `changes` called it before): the
same changes in the same order over trees of every kind of entry (files, executables, symlinks,
submodules, folders), an entry changing kind, folders added, removed and nested. The trees are
drawn from a seeded generator, so every run compares the same ones."""

from __future__ import annotations

import random
from itertools import pairwise

from dulwich.diff_tree import tree_changes
from dulwich.objects import Blob, Tree
from dulwich.repo import Repo

from tools.repo.history import Objects
from tools.repo.treediff import file_changes

NAMES = [b"a", b"a-b", b"a.txt", b"b", b"c", b"z"]
MODES = [0o100644, 0o100755, 0o120000, 0o160000]
FOLDER = 0o040000


class Trees:
    def __init__(self, repo: Repo, seed: int) -> None:
        self.repo, self.rng = repo, random.Random(seed)

    def blob(self) -> bytes:
        blob = Blob.from_string(bytes([self.rng.randrange(3)]))
        self.repo.object_store.add_object(blob)
        return blob.id

    def stored(self, tree: Tree) -> bytes:
        self.repo.object_store.add_object(tree)
        return tree.id

    def made(self, depth: int = 0) -> bytes:
        tree = Tree()
        for name in self.rng.sample(NAMES, self.rng.randint(0, len(NAMES))):
            if depth < 3 and self.rng.random() < 0.35:
                tree.add(name, FOLDER, self.made(depth + 1))
            else:
                tree.add(name, self.rng.choice(MODES), self.blob())
        return self.stored(tree)

    def changed(self, sha: bytes, depth: int = 0) -> bytes:
        """The tree with some entries dropped, changed, changed in kind or added."""
        old, tree = self.repo.object_store[sha], Tree()
        assert isinstance(old, Tree)
        for name in old:
            mode, entry = old[name]
            roll = self.rng.random()
            if roll < 0.1:
                continue
            if mode == FOLDER and roll < 0.5:
                tree.add(name, mode, self.changed(entry, depth + 1))
            elif roll < 0.2 and depth < 3:
                tree.add(name, FOLDER, self.made(depth + 1))
            elif roll < 0.3:
                tree.add(name, self.rng.choice(MODES), self.blob())
            else:
                tree.add(name, mode, entry)
        for name in NAMES:
            if name not in tree and self.rng.random() < 0.1:
                tree.add(name, MODES[0], self.blob())
        return self.stored(tree)


def _dulwich(repo: Repo, old: bytes | None, new: bytes) -> list[tuple[bytes, object, object]]:
    return [
        (
            (change.new or change.old).path,
            None if change.old is None else (change.old.mode, change.old.sha),
            None if change.new is None else (change.new.mode, change.new.sha),
        )
        for change in tree_changes(repo.object_store, old, new)
    ]


def test_the_changes_and_their_order_are_dulwichs(tmp_path):
    repo = Repo.init(str(tmp_path), mkdir=False)
    trees, objects = Trees(repo, seed=57), Objects(repo)
    kinds_changed = 0
    for _ in range(400):
        old = trees.made() if trees.rng.random() < 0.8 else None
        new = trees.changed(old) if old is not None and trees.rng.random() < 0.8 else trees.made()
        found = [
            (change.path, change.old, change.new) for change in file_changes(objects, old, new)
        ]
        assert found == _dulwich(repo, old, new)
        kinds_changed += any(a[0] == b[0] for a, b in pairwise(found))
    assert kinds_changed > 10  # a path deleted and added again: its kind changed
