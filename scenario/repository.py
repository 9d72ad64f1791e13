"""A `repository` record admitted: a git repository's folder, pinned to its HEAD commit.

A repository is a folder, not a file: its identity is the HEAD commit id at admission, kept in the
record's `sha256` field, and a reading sees only the history reachable from that commit, so a
commit made after admission is never read. Git objects are named by their content: the pinned
commit is the version read. Read with dulwich (no `git` process); its git folder, and any object
store it borrows from (`alternates`), must lie inside the manifest's folder like any record.
"""

from __future__ import annotations

import os
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING

from contract.errors import ManifestError

if TYPE_CHECKING:
    from dulwich.repo import Repo


def open_repository(path: Path, root: Path, where: str) -> Repo:
    """The repository at `path` (a work tree or a bare repository), its git folder confined to
    `root`; a `ManifestError` naming what was wrong otherwise."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo(str(path))
    except (NotGitRepository, OSError, ValueError, KeyError) as exc:
        raise ManifestError(f"{where}: {path.name!r} is not a git repository ({exc})") from None
    control = Path(repo.controldir()).resolve()
    objects = (control / "objects").resolve()
    if not (control.is_relative_to(root) and objects.is_relative_to(root)):
        repo.close()
        raise ManifestError(
            f"{where}: the git folder of {path.name!r} leaves the manifest's folder"
        )
    if (control / "objects" / "info" / "alternates").exists() or (control / "commondir").exists():
        repo.close()
        raise ManifestError(
            f"{where}: {path.name!r} borrows objects from another repository; admit a repository"
            " of its own"
        )
    return repo


def pin_head(path: Path, root: Path, where: str) -> tuple[os.stat_result, str]:
    """The repository folder's identity and its HEAD commit id (40 hex digits)."""
    found = os.stat(path, follow_symlinks=False)
    if not S_ISDIR(found.st_mode):
        raise ManifestError(f"{where}: {path.name!r} is not a folder (a repository record is one)")
    repo = open_repository(path, root, where)
    try:
        head = repo.head().decode("ascii")
        commit = repo[head.encode("ascii")]
    except (KeyError, ValueError) as exc:
        raise ManifestError(f"{where}: {path.name!r} has no HEAD commit ({exc})") from None
    finally:
        repo.close()
    if commit.type_name != b"commit":
        raise ManifestError(f"{where}: {path.name!r}'s HEAD is not a commit")
    return found, head
