"""The `[[record]]` tables of a drafted manifest (`draft.py`): each group of files (one folder, one
kind, one suffix, gzipped or not) as one family whose glob reaches exactly its files, else file by
file.

A family's glob is `*.log`, or `*.log.gz` when every member is gzipped; where only some are, it is
`*.log*`, one family, so that a gzipped member is triaged with the others rather than drafted as
a record no family tool reads. A glob is drafted only where, among every file and link of its
folder, it matches the group's files alone: never a link or a file admission refuses, never a
history without its columns, never another suffix (`*.log*` would reach `x.log.bak`). Where
`*.log*` reaches more, the plain and the gzipped members are tried as two families; where a glob
still reaches more, each file is a record of its own. A regression's summary (`summaries.py`)
that a glob cannot leave out is the one file a family keeps beyond its group, named in the
table's comment.

A JUnit report (`summaries.junit_report`) is a log too: where its folder also holds logs, the two
groups are one family, `[!.]*` (every file of the folder but hidden ones), when that reaches them
alone, so that `triage` joins a test held in both; otherwise the reports are a family of their own
(`*.xml`, or a report's exact name beside other XML): the baseline triages families only.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

Group = tuple[str, str, str]
"""(folder, kind, suffix without `.gz`), as the files were grouped."""


@dataclass(frozen=True)
class Table:
    """One `[[record]]` table: a family (`glob`) or a single file (`path`)."""

    kind: str
    glob: str | None = None
    path: str = ""
    size: int = 1
    kept: tuple[str, ...] = ()
    """Summaries the glob reaches and cannot leave out."""


def drafted_tables(
    groups: Mapping[Group, list[str]],
    names: Mapping[str, Collection[str]],
    summaries: Collection[str],
) -> list[Table]:
    """The tables for `groups` (folder → `names` of everything in it), in a stable order."""
    tables: list[Table] = []
    joined = _with_junit(groups, names, summaries)
    for (parent, kind, ending), files in sorted(groups.items()):
        here = names.get(parent, ())
        if (family := joined.get((parent, kind))) is not None:
            tables += [] if family in tables else [family]  # one table for the folder's groups
        elif ending == ".xml":  # JUnit reports: a family even alone, for the baseline to triage
            found = _family(parent, kind, f"*{_glob_escaped(ending)}*", files, here, summaries)
            tables += [found] if found else [_one(file) for file in sorted(files)]
        else:
            tables += _tables(parent, kind, ending, sorted(files), here, summaries)
    return tables


def _with_junit(
    groups: Mapping[Group, list[str]],
    names: Mapping[str, Collection[str]],
    summaries: Collection[str],
) -> dict[tuple[str, str], Table]:
    """Per folder holding both logs and JUnit reports, one family of both where `[!.]*` reaches
    them alone: a test held in both (its log and its testcase) is then one test to `triage`."""
    tables: dict[tuple[str, str], Table] = {}
    for parent, kind, ending in groups:
        if ending != ".xml" or (parent, kind, ".xml") not in groups:
            continue
        logs = [files for (folder, k, e), files in groups.items() if folder == parent and k == kind]
        if len(logs) < 2:
            continue
        files = sorted(file for group in logs for file in group)
        here = names.get(parent, ())
        if found := _family(parent, kind, "[!.]*", files, here, summaries):
            tables[(parent, kind)] = found
    return tables


def _one(file: str) -> Table:
    """A JUnit report alone in its folder, as a family of itself (its exact name as the glob)."""
    return Table("log", glob=_glob_escaped(file), size=1)


def _tables(
    parent: str,
    kind: str,
    ending: str,
    files: list[str],
    names: Collection[str],
    summaries: Collection[str],
) -> Iterator[Table]:
    if len(files) == 1:
        yield Table(kind, path=files[0])
        return
    plain = [file for file in files if not file.endswith(".gz")]
    packed = [file for file in files if file.endswith(".gz")]
    tail = "*" if plain and packed else ".gz" if packed else ""
    pattern = f"*{_glob_escaped(ending)}{tail}"
    found = _family(parent, kind, pattern, files, names, summaries)
    if found is not None:
        yield found
    elif plain and packed:
        for part in (plain, packed):
            yield from _tables(parent, kind, ending, part, names, summaries)
    else:
        yield from (Table(kind, path=file) for file in files)


def _family(
    parent: str,
    kind: str,
    pattern: str,
    files: list[str],
    names: Collection[str],
    summaries: Collection[str],
) -> Table | None:
    """The family of `files` under `pattern` (a glob of names), if it reaches nothing else in
    their folder but summaries; else None."""
    folder = "" if parent == "." else f"{parent}/"
    mine = {PurePosixPath(file).name for file in files}
    beyond = {name for name in names if fnmatch.fnmatchcase(name, pattern)} - mine
    kept = sorted(f"{folder}{name}" for name in beyond)
    if not set(kept) <= set(summaries):
        return None
    glob = f"{_glob_escaped(folder)}{pattern}"
    return Table(kind, glob=glob, size=len(files) + len(kept), kept=tuple(kept))


def _glob_escaped(text: str) -> str:
    """A name as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)
