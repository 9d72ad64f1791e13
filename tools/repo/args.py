"""What a `changes` call may say: a repository record, two points of its history, path globs.

A point is a revision (a commit id of 7 to 40 hex digits, a tag, a branch) or an ISO date
(`2026-12-01`, `2026-12-01T08:00:00Z`, `2026-12-01T08:00+02:00`); a time needs its zone. Each is
checked here, before the guard resolves anything, so a malformed one is refused in one line.
"""

from __future__ import annotations

import fnmatch
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import PurePosixPath
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from tools.args import RepositoryId, ToolArgs

MAX_GLOBS = 16

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME = re.compile(
    r"(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})T(?P<clock>[0-9]{2}:[0-9]{2}(?::[0-9]{2})?)"
    r"(?P<zone>Z|[+-][0-9]{2}:[0-9]{2})"
)
_LOOKS_DATED = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:$|T)")
_REF_PART = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9._+-]*")
HEX = re.compile(r"[0-9a-f]{7,40}")


def point_time(text: str, until: bool) -> int | None:
    """The POSIX time a date point stands for, or None for a revision. A day alone is its first
    second (UTC) as `since` and its last as `until`, so `until=2026-12-01` holds that whole day."""
    if _DATE.fullmatch(text):
        day = date.fromisoformat(text)
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return int((start + timedelta(days=1, seconds=-1) if until else start).timestamp())
    if found := _TIME.fullmatch(text):
        zone = "+00:00" if found["zone"] == "Z" else found["zone"]
        return int(datetime.fromisoformat(f"{found['day']}T{found['clock']}{zone}").timestamp())
    return None


def _point(text: str) -> str:
    if _LOOKS_DATED.match(text):
        if not (_DATE.fullmatch(text) or _TIME.fullmatch(text)):
            raise ValueError(
                "a date is YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] with its zone (Z or +HH:MM)"
            )
        try:
            point_time(text, until=False)
        except ValueError:
            raise ValueError(f"{text!r} is not a calendar date or time") from None
        return text
    parts = text.split("/")
    if not all(_REF_PART.fullmatch(part) and not part.endswith(".lock") for part in parts) or (
        ".." in text
    ):
        raise ValueError(
            "a revision is a commit id (7 to 40 hex digits), a tag or a branch name"
            " (letters, digits, `._+-/`, no `..`)"
        )
    return text


Point = Annotated[str, StringConstraints(min_length=1, max_length=100), AfterValidator(_point)]
"""A revision or an ISO date."""


def _glob(pattern: str) -> str:
    path = PurePosixPath(pattern)
    if "\x00" in pattern or "\\" in pattern or path.is_absolute() or ".." in path.parts:
        raise ValueError("a path glob is relative to the repository's top, without `..`")
    if any(ord(char) < 32 for char in pattern):
        raise ValueError("a path glob must not contain control characters")
    return pattern


PathGlob = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(_glob)]


class ChangesArgs(ToolArgs):
    repo: RepositoryId
    """The exact id of an approved `repository` record."""
    since: Point
    """Commits after this one (a commit id, tag or branch) or after this date; itself excluded."""
    until: Point
    """Commits up to this one (a commit id, tag or branch) or this date; itself included."""
    paths: Annotated[list[PathGlob], Field(max_length=MAX_GLOBS)] | None = None
    """Only commits touching a file these globs name (`rtl/*.sv`, `rtl/**`, a folder `rtl`)."""


def glob_matches(pattern: str, path: str) -> bool:
    """Whether a changed file's path is one the glob names: component by component (`*`, `?`,
    `[…]` within one), `**` for any number of folders, and a folder naming everything under it."""
    return _matches(PurePosixPath(pattern).parts, PurePosixPath(path).parts)


def _matches(parts: tuple[str, ...], names: tuple[str, ...]) -> bool:
    if not parts:
        return True  # the pattern named a folder the path lies under
    if parts[0] == "**":
        return any(_matches(parts[1:], names[skip:]) for skip in range(len(names) + 1))
    return (
        bool(names) and fnmatch.fnmatchcase(names[0], parts[0]) and _matches(parts[1:], names[1:])
    )
