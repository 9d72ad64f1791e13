"""The files a commit changed against its parent: what dulwich's `tree_changes` yields as `changes`
called it (no renames, folders not listed, a file whose type changed deleted and added), in its
order, walked over the call's objects (`history.Objects`): the entries two trees share are set
aside by comparing the trees' listings, without an entry object or a path made for each of them
(dulwich's walk spent more on those than on reading the trees).
"""

from __future__ import annotations

import posixpath
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scenario.reading import check_time

if TYPE_CHECKING:
    from dulwich.objects import ObjectID

    from tools.repo.history import Objects

Side = tuple[int, "ObjectID"]
"""A tree entry's mode and object id."""
TIME_CHECK_EVERY = 256


@dataclass(frozen=True)
class FileChange:
    path: bytes
    """The file's path from the repository's top (`/` between folders)."""
    old: Side | None
    """Before, or None for a file added."""
    new: Side | None
    """After, or None for a file deleted."""


def file_changes(
    objects: Objects, old_tree: ObjectID | None, new_tree: ObjectID
) -> list[FileChange]:
    """The files changed from `old_tree` (None: an empty tree) to `new_tree`, depth first in name
    order, as dulwich walks them; identical folders not opened."""
    found: list[FileChange] = []
    root_old = None if old_tree is None else (stat.S_IFDIR, old_tree)
    todo: list[tuple[bytes, Side | None, Side | None]] = [(b"", root_old, (stat.S_IFDIR, new_tree))]
    steps = 0
    while todo:
        steps += 1
        if steps % TIME_CHECK_EVERY == 0:
            check_time()
        path, before, after = todo.pop()
        if before == after:
            continue
        old_dir = before is not None and stat.S_ISDIR(before[0])
        new_dir = after is not None and stat.S_ISDIR(after[0])
        if old_dir or new_dir:
            old = objects.entries(before[1]) if before is not None and old_dir else {}
            new = objects.entries(after[1]) if after is not None and new_dir else {}
            differing = {name for name, _ in old.items() ^ new.items()}  # identical: skipped
            todo.extend(
                (posixpath.join(path, name), old.get(name), new.get(name))
                for name in sorted(differing, reverse=True)
            )
        old_file, new_file = (None if old_dir else before), (None if new_dir else after)
        if old_file and new_file and stat.S_IFMT(old_file[0]) != stat.S_IFMT(new_file[0]):
            found.append(FileChange(path, old_file, None))
            found.append(FileChange(path, None, new_file))
        elif old_file or new_file:
            found.append(FileChange(path, old_file, new_file))
    return found
