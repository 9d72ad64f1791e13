"""Record families: one manifest entry, `glob = "runs/R42/*.log"`, approving every file it matches.

Each file becomes a record whose id is its path relative to the manifest's folder, so ids stay
exact (a chooser names `runs/R42/reset_smoke.log`) and are checked against the pattern again when
the record is read. Patterns match path components one by one (`*`, `?`, `[…]` within a
component, as `fnmatch`); `**` is not taken, so that listing and checking cannot disagree.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath


def glob_problem(pattern: str) -> str | None:
    """Why a pattern cannot name a family (one line), or None."""
    path = PurePosixPath(pattern)
    if "\x00" in pattern or "\\" in pattern or path.is_absolute() or pattern.startswith("~"):
        return f"glob {pattern!r} is not a plain relative pattern"
    if ".." in path.parts:
        return f"glob {pattern!r} leaves the manifest's folder"
    if any("**" in part for part in path.parts):
        return f"glob {pattern!r}: `**` is not supported; name each folder level (`runs/*/*.log`)"
    return None


def matches(pattern: str, relative: str) -> bool:
    """Whether a relative path is one the pattern names (component by component)."""
    parts, names = PurePosixPath(pattern).parts, PurePosixPath(relative).parts
    if any(name in (".", "..") for name in names):
        return False
    return len(parts) == len(names) and all(
        fnmatch.fnmatchcase(name, part) for name, part in zip(names, parts, strict=True)
    )


def expand(root: Path, pattern: str) -> list[str]:
    """The relative paths of the files under `root` the pattern names, sorted; folders skipped."""
    found = {
        path.relative_to(root).as_posix()
        for path in root.glob(pattern)
        if path.is_file() or path.is_symlink()  # a symlink is refused when admitted, not skipped
    }
    return sorted(relative for relative in found if matches(pattern, relative))
