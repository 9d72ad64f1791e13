"""A manifest drafted from a folder of records, for a person to review before any run.

Files are approved by kind from their names: logs (`.log`, `.out`, `.txt`, and gzipped), specs
(`.md`, `.pdf`: admission tells a PDF by its bytes), histories (`.csv`, `.tsv` whose header has the
history columns), waveforms (`.vcd`, `.fst`, `.ghw`) and STA reports (`.rpt`, `.sta`, `.timing`);
a git repository under the folder (a work tree's or a bare one's folder) is a `repository` record
of a triage draft, and nothing inside it is drafted. Files of one kind and suffix in one folder, gzipped or not, become
one family (`glob = "runs/R42/*.log"`, `*.log*` when some are gzipped; `drafttables.py`); a lone
file is a record of its own. A `.txt` or `.rpt` file that reads as the regression's own summary (a
test status on most of its lines, `summaries.py`) is no log and no STA report: it is left out,
and said, rather than drafted as a log family that triage reads for verdicts it never states.
The draft approves nothing by itself: it is a file to read, and the manifest is admitted like any
other when a run starts.

A file admission would refuse is left out, and the draft says so in a comment (as the command does
on stderr), one line per file: a symlink, a file with more than one hard link (it can reach outside
the folder as a symlink can), a spec or history over its size limit. The draft names none of them,
not even through a family's glob (a glob reaches its group's files alone, or is not drafted), so
admitting it never meets one.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections import defaultdict
from pathlib import Path, PurePosixPath

from scenario.delimited import missing_columns
from scenario.drafttables import Table, drafted_tables
from scenario.manifest import Budget
from scenario.profiles import TRIAGE_TOP_BUCKETS
from scenario.recordfile import HISTORY_COLUMNS, MAX_RECORD_BYTES
from scenario.registry import MAX_RECORDS, Scenario, load_scenario
from scenario.summaries import junit_report, summary_of

KINDS = {
    ".log": "log",
    ".out": "log",
    ".txt": "log",
    ".md": "spec",
    ".pdf": "spec",
    ".vcd": "waveform",
    ".fst": "waveform",
    ".ghw": "waveform",
    ".csv": "history",
    ".tsv": "history",
    ".rpt": "sta_report",
    ".sta": "sta_report",
    ".timing": "sta_report",
}
DEFAULT = Budget()
"""A drafted manifest's budget where its profile's plan needs no more: the manifest's defaults."""
MAX_FILES = 100_000
"""Files looked at; a larger folder is refused (draft a manifest per sub-folder)."""


def _ending(relative: str) -> str:
    """`.log` or `.log.gz`, as written: what a family's glob ends with."""
    name = PurePosixPath(relative).name
    gz = ".gz" if name.endswith(".gz") else ""
    return PurePosixPath(name.removesuffix(".gz")).suffix + gz


def _suffix(relative: str) -> str:
    """`.log` for `x.log` and `x.log.gz`, lower-cased: what tells the kind."""
    return _ending(relative).removesuffix(".gz").lower()


def folder_scenario_id(folder: Path, fallback: str) -> str:
    """A scenario id from the folder's own name (`nightly`), its other characters as `-`."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", folder.resolve().name).strip("-.") or fallback


def draft_manifest(folder: Path, scenario_id: str) -> tuple[str, list[str]]:
    """The manifest's TOML text, and what was left out and why (one line each)."""
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    left_out: list[str] = []
    files, links, repositories = _files(folder)
    refused = [f"{link}: a symlink (name its target instead)" for link in links]
    summaries: dict[str, str] = {}  # a regression's summary → why it is left out
    for relative in files:
        kind = KINDS.get(_suffix(relative))
        if kind is None and _suffix(relative) == ".xml" and junit_report(folder / relative):
            kind = (
                "log"  # a JUnit report: each testcase a test of the nightly (`tools/logs/junit.py`)
            )
        if kind is None:
            continue
        if problem := _inadmissible(folder / relative, kind):
            refused.append(f"{relative}: {problem}")
            continue
        if kind == "history" and (missing := _missing_columns(folder / relative)):
            left_out.append(f"{relative}: not a history (lacks {', '.join(missing)})")
            continue
        if summary := summary_of(folder / relative):
            summaries[relative] = f"{relative}: {SUMMARY_NOTE.format(summary=summary)}"
            continue
        parent = PurePosixPath(relative).parent.as_posix()
        groups[(parent, kind, _ending(relative).removesuffix(".gz"))].append(relative)
    left_out += refused
    triage = {key: files for key, files in groups.items() if key[1] != "sta_report"}
    sta = {key: files for key, files in groups.items() if key[1] == "sta_report"}
    chosen, other = (triage, sta) if triage or not sta else (sta, triage)
    left_out += [
        f"{file}: an STA report (a scenario's profile is triage or sta: draft one per profile)"
        for files in other.values()
        for file in files
    ]
    tables = drafted_tables(chosen, _names_by_folder([*files, *links]), summaries)
    if chosen is triage:
        tables += [Table("repository", path=repository) for repository in repositories]
    else:
        left_out += [
            f"{repository}: a git repository (an sta draft reads none)"
            for repository in repositories
        ]
    kept = {summary for table in tables for summary in table.kept}
    left_out += [why for summary, why in summaries.items() if summary not in kept]
    text = _toml(scenario_id, "sta" if chosen is sta else "triage", tables)
    notes = "".join(f"# left out: {_comment(line)}\n" for line in left_out)
    return text + (f"\n{notes}" if notes else ""), left_out


SUMMARY_NOTE = (
    "the regression's own summary ({summary}), not a log: triaged as one it states no verdict"
    " and spends the evidence budget (approve it as a record of its own to read it)"
)
KEPT = "the regression's own summary, which no glob here can leave out"


def _names_by_folder(relatives: list[str]) -> dict[str, set[str]]:
    """Each folder → the names of every file and link in it: what a glob there could reach."""
    names: dict[str, set[str]] = defaultdict(set)
    for relative in relatives:
        path = PurePosixPath(relative)
        names[path.parent.as_posix()].add(path.name)
    return names


def _inadmissible(path: Path, kind: str) -> str | None:
    """Why admission would refuse this file (`scenario.registry`), in a few words, or None."""
    found = path.lstat()
    if found.st_nlink != 1:
        return f"{found.st_nlink} hard links (a record must be a file of its own: copy it instead)"
    limit = MAX_RECORD_BYTES.get(kind)
    if limit is not None and found.st_size > limit:
        return f"larger than {limit >> 20} MiB, the limit for a {kind} record"
    return None


def _comment(line: str) -> str:
    """A line as the text of one TOML comment (no line break or control character in it)."""
    return "".join(char if char.isprintable() else "?" for char in line)


def _files(folder: Path) -> tuple[list[str], list[str], list[str]]:
    """Regular files and symlinks under `folder` (hidden folders skipped), and the git
    repositories' folders (not walked into), relative, sorted."""
    files: list[str] = []
    links: list[str] = []
    repositories: list[str] = []
    for top, folders, names in os.walk(folder):
        here = Path(top)
        if here != folder and _is_repository(folders, names):
            repositories.append(here.relative_to(folder).as_posix())
            folders[:] = []
            continue
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in names:
            path = here / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink():
                links.append(relative)
            elif path.is_file():
                files.append(relative)
            if len(files) + len(links) > MAX_FILES:
                raise ValueError(
                    f"{folder} holds more than {MAX_FILES} files; draft per sub-folder"
                )
    return sorted(files), sorted(links), sorted(repositories)


def _is_repository(folders: list[str], names: list[str]) -> bool:
    """A work tree (its `.git` a folder) or a bare repository (`HEAD`, `objects/`, `refs/`)."""
    if ".git" in folders:
        return True
    return "HEAD" in names and {"objects", "refs"} <= set(folders)


def _missing_columns(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="replace") as handle:
            header = handle.readline(64 * 1024)
    except OSError:
        return list(HISTORY_COLUMNS)
    return missing_columns(header, HISTORY_COLUMNS)


def _evidence(profile: str, tables: list[Table]) -> int:
    """Evidence items a triage draft's own plan needs, never under the default: one triage per
    log family, the lines around each of the largest buckets' examples and, with a history, each
    one's rows; a draft whose budget cannot cover its profile's plan would leave buckets unread."""
    if profile != "triage":
        return DEFAULT.evidence
    families = sum(1 for table in tables if table.kind == "log" and table.glob is not None)
    history = any(table.kind == "history" for table in tables)
    plan = families + TRIAGE_TOP_BUCKETS * (2 if history else 1) if families else 0
    return max(DEFAULT.evidence, plan)


def _toml(scenario_id: str, profile: str, tables: list[Table]) -> str:
    lines = [
        "# Drafted by `warrant scenario new`: review every record before running it.",
        f"id = {_quoted(scenario_id)}",
        f"profile = {_quoted(profile)}",
        '# goal = "The question this investigation answers"  (or give --goal to `warrant run`)',
        "",
        "[budget]",
        f"steps = {DEFAULT.steps}",
        f"evidence = {_evidence(profile, tables)}",
        f"deadline_s = {DEFAULT.deadline_s}",
    ]
    count = 0
    for table in tables:
        count += table.size
        if count > MAX_RECORDS:
            raise ValueError(f"more than {MAX_RECORDS} records; draft per sub-folder")
        lines += ["", "[[record]]"]
        if table.glob is not None:
            kept = f"; {', '.join(table.kept)} too: {KEPT}" if table.kept else ""
            lines.append(f"glob = {_quoted(table.glob)}  # {table.size} files{_comment(kept)}")
        else:
            lines += [f"id = {_quoted(table.path)}", f"path = {_quoted(table.path)}"]
        lines.append(f"kind = {_quoted(table.kind)}")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string is a JSON string


def admitted_draft(target: Path, text: str) -> Scenario:
    """The draft admitted as a manifest before it is written to `target`: a draft admission would
    refuse is never left behind (nor one it replaces lost). It is first written beside `target`
    (its records are relative to the folder), under a hidden name no record's glob matches."""
    trial = target.with_name(f".{target.name}.{os.getpid()}.draft")
    try:
        trial.write_text(text, encoding="utf-8")
        scenario = load_scenario(trial)
        os.replace(trial, target)
    finally:
        trial.unlink(missing_ok=True)
    return scenario
