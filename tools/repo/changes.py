"""changes: the commits of an approved repository between two points, with the files each changed.

One line per commit (`c1a2b3c4 2026-12-01T08:00:00Z Alice: subject`), then one per file it
changed against its first parent (`  +3 -1 rtl/top.sv`; `-` for a binary or over-large file), so
a reader can cite a commit's line. Read with dulwich from the history pinned at admission
(`tools/repo/history.py`); no `git` is run and no work tree is read. The files changed are those
dulwich's tree diff finds (`treediff.py`), their lines counted as `git diff --numstat` counts them
(`numstat.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scenario.reading import check_time
from scenario.registry import Record
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.repo.args import ChangesArgs, glob_matches
from tools.repo.history import History, between, pinned_history
from tools.repo.numstat import line_counts
from tools.repo.treediff import FileChange, file_changes

if TYPE_CHECKING:
    from dulwich.objects import Commit

MAX_COMMITS = 50
MAX_FILES = 20
"""Files listed per commit; the rest are counted."""
SHORT_SHA = 8
MAX_COUNTED_BYTES = 256 << 10
"""A changed file larger than this, on either side, has its lines not counted (`-`)."""
BINARY_PROBE = 8000
"""Bytes looked at for a NUL, as git does, to call a file binary."""
GITLINK = 0o160000
"""A tree entry's mode for a submodule: its object is a commit of another repository."""


def run(args: ChangesArgs, records: Mapping[str, Record]) -> Excerpt:
    """The commits of an approved git repository between two revisions (commit id, tag, branch) or
    ISO dates, newest first, each with its date, author, subject and the files it changed with
    added/deleted line counts; `paths` globs narrow to commits touching those files."""
    record = records["repo"]
    with pinned_history(record) as history:
        span = between(history, args.since, args.until)
        if args.paths:
            span = [commit for commit in span if _touches(history, commit, args.paths)]
        shown = span[:MAX_COMMITS]
        lines: list[Line] = []
        files_left = False
        for commit in shown:
            files_left = _describe(history, commit, lines) or files_left
    summary = (
        f"{len(span)} commit(s) after {args.since} up to {args.until}"
        f" in {record.id} (pinned at {record.sha256[:SHORT_SHA]})"
    )
    if args.paths:
        summary += f", touching {', '.join(args.paths)}"
    if len(span) > MAX_COMMITS:
        summary += f"; the newest {MAX_COMMITS} shown, {len(span) - MAX_COMMITS} more not shown"
    return make_excerpt(summary, lines, len(span) > MAX_COMMITS or files_left)


def _describe(history: History, commit: Commit, lines: list[Line]) -> bool:
    """Append the commit's line and its files' lines; whether files were left out."""
    name = commit.author.decode("utf-8", "replace").split(" <", 1)[0]
    when = datetime.fromtimestamp(commit.commit_time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    subject = commit.message.decode("utf-8", "replace").strip().split("\n", 1)[0]
    sha = commit.id.decode("ascii")[:SHORT_SHA]
    lines.append(make_line(len(lines) + 1, f"{sha} {when} {name}: {subject}"))
    changes = sorted(_changes(history, commit), key=_path)
    for change in changes[:MAX_FILES]:
        added, deleted = _counts(history, change)
        lines.append(make_line(len(lines) + 1, f"  +{added} -{deleted} {_path(change)}"))
    if len(changes) > MAX_FILES:
        left = len(changes) - MAX_FILES
        lines.append(make_line(len(lines) + 1, f"  … {left} more file(s) not shown"))
    return len(changes) > MAX_FILES


def _changes(history: History, commit: Commit) -> list[FileChange]:
    """The files the commit changed against its first parent (all of them for a first commit)."""
    parent = history.commit(commit.parents[0]) if commit.parents else None
    return file_changes(history.objects, parent.tree if parent is not None else None, commit.tree)


def _path(change: FileChange) -> str:
    return change.path.decode("utf-8", "replace")


def _touches(history: History, commit: Commit, globs: list[str]) -> bool:
    paths = {_path(change) for change in _changes(history, commit)}
    return any(glob_matches(glob, path) for glob in globs for path in paths)


def _counts(history: History, change: FileChange) -> tuple[str, str]:
    """Lines added and deleted, as text; `-` for both when a side is binary or too large."""
    sides = []
    for side in (change.old, change.new):
        if side is None:
            sides.append(b"")
            continue
        mode, sha = side
        if mode & 0o170000 == GITLINK:  # a submodule's commit
            return "-", "-"
        check_time()
        data = history.objects.blob_bytes(sha)
        if data is None or len(data) > MAX_COUNTED_BYTES or b"\0" in data[:BINARY_PROBE]:
            return "-", "-"
        sides.append(data)
    added, deleted = line_counts(sides[0], sides[1])
    return str(added), str(deleted)
