"""The tool catalog of each profile: names, argument models, record kinds, and run functions.

The catalog is documentation for a chooser and a lookup table for the guard and the executor; it
grants nothing by itself (the guard re-checks every call against the scenario's records).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, get_args

from scenario.manifest import RecordKind
from scenario.profiles import PROFILE_TOOLS
from tools.analysis import analyze
from tools.analysis.query import AnalyzeArgs
from tools.args import Names, ToolArgs
from tools.excerpt import Excerpt
from tools.logs import familytools, logsummary, readlines, readspec, runhistory, searchlogs
from tools.repo import changes
from tools.repo.args import ChangesArgs
from tools.specs import readpages, searchdocs
from tools.sta import diff as stadiff
from tools.sta import paths as sta_paths
from tools.sta import summary as sta
from tools.wave import run as wave
from tools.wave.args import WaveformArgs


@dataclass(frozen=True)
class ToolSpec:
    name: str
    """The name a chooser uses in a tool call."""
    description: str
    """One line for the chooser's catalog."""
    args_model: type[ToolArgs]
    """Strict argument model; the first check a call's arguments meet."""
    record_fields: tuple[str, ...]
    """Argument fields that name approved records (looked up, never opened as paths)."""
    record_kind: RecordKind
    """The kind of record those fields must name (without any, that of the first argument naming
    records)."""
    run: Callable[..., Excerpt]
    """Reads the records; called only by the executor, for calls the guard approved:
    `run(args, records)`, and `run(args, records, family, progress)` for a family tool."""
    needs_approval: bool = False
    """Every use waits for a person's approval, whatever the record says."""
    family_field: str | None = None
    """The argument that names a record family (a manifest's glob, or a list of ids), resolved by
    the guard to its members (`Scenario.family`); None for a tool of single records."""
    family_kind: RecordKind = "log"
    """The kind of record a family's members must be."""
    optional_records: tuple[str, ...] = ()
    """Of `record_fields` and `family_field`, those a call may leave out (None)."""
    tables_field: str | None = None
    """The argument that maps table names to record ids (`analyze`), each resolved by the guard
    to the admitted record the executor reads as field `tables.NAME`."""
    table_kinds: tuple[RecordKind, ...] = ()
    """The kinds of record a table may be."""
    every_record: RecordKind | None = None
    """The kind of which the tool reads every approved record, no argument naming one
    (`searchdocs`): the guard resolves each, the executor reads it as field `every.ID`."""


_TOOLS: tuple[tuple[str, type[ToolArgs], Callable[..., Excerpt]], ...] = (
    ("searchlogs", searchlogs.SearchLogsArgs, searchlogs.run),
    ("readlines", readlines.ReadLinesArgs, readlines.run),
    ("logsummary", logsummary.LogSummaryArgs, logsummary.run),
    ("readspec", readspec.ReadSpecArgs, readspec.run),
    ("getrunhistory", runhistory.RunHistoryArgs, runhistory.run),
    ("triage", familytools.TriageArgs, familytools.run_triage),
    ("searchfamily", familytools.SearchFamilyArgs, familytools.run_searchfamily),
    ("stasummary", sta.ReportArgs, sta.stasummary),
    ("stapaths", sta_paths.PathsArgs, sta_paths.stapaths),
    ("stapath", sta_paths.PathArgs, sta_paths.stapath),
    ("stadiff", stadiff.DiffArgs, stadiff.stadiff),
    ("analyze", AnalyzeArgs, analyze.run),
    ("waveform", WaveformArgs, wave.run),
    ("readpages", readpages.ReadPagesArgs, readpages.run),
    ("changes", ChangesArgs, changes.run),
    ("searchdocs", searchdocs.SearchDocsArgs, searchdocs.run),
)
"""What the argument models cannot say: each tool's name, model and run function. The rest of a
`ToolSpec` is derived: its description from the run function's docstring, what the guard resolves
from the arguments marked `Names` (tools/args.py)."""


@dataclass(frozen=True)
class _Named:
    """An argument that names approved records, as its `Names` mark says."""

    field: str
    names: Names
    optional: bool


def _named_arguments(args_model: type[ToolArgs]) -> list[_Named]:
    """The arguments marked `Names`, on their type or, for `X | None`, on `X`."""
    named = []
    for field, info in args_model.model_fields.items():
        marks = [*info.metadata]
        for member in get_args(info.annotation):
            marks.extend(getattr(member, "__metadata__", ()))
        names = next((mark for mark in marks if isinstance(mark, Names)), None)
        if names is not None:
            named.append(_Named(field, names, optional=not info.is_required()))
    return named


def _one(named: list[_Named], role: str) -> _Named | None:
    found = [argument for argument in named if argument.names.role == role]
    if len(found) > 1:
        raise TypeError(f"more than one argument names a {role}: {found}")
    return found[0] if found else None


def _description(run: Callable[..., Excerpt]) -> str:
    """The first paragraph of the run function's docstring, on one line (the rest is for its
    maintainers)."""
    first = (inspect.getdoc(run) or "").split("\n\n")[0]
    return " ".join(line.strip() for line in first.splitlines())


def _spec(name: str, args_model: type[ToolArgs], run: Callable[..., Excerpt]) -> ToolSpec:
    named = _named_arguments(args_model)
    records = [argument for argument in named if argument.names.role == "record"]
    family, tables = _one(named, "family"), _one(named, "tables")
    if len({argument.names.kinds for argument in records}) > 1:
        raise TypeError(f"{name}: record arguments of different kinds")
    return ToolSpec(
        name=name,
        description=_description(run),
        args_model=args_model,
        record_fields=tuple(argument.field for argument in records),
        record_kind=(records or named)[0].names.kinds[0]
        if records or named
        else _every(name, args_model),
        run=run,
        family_field=family.field if family else None,
        family_kind=family.names.kinds[0] if family else "log",
        optional_records=tuple(
            argument.field
            for argument in [*records, *([family] if family else [])]
            if argument.optional
        ),
        tables_field=tables.field if tables else None,
        table_kinds=tables.names.kinds if tables else (),
        every_record=args_model.reads_every,
    )


def _every(name: str, args_model: type[ToolArgs]) -> RecordKind:
    """The kind a tool reads every record of, when no argument names records."""
    if args_model.reads_every is None:
        raise TypeError(f"{name}: no argument names records and it reads no kind whole")
    return args_model.reads_every


_SPECS = {spec.name: spec for spec in (_spec(*tool) for tool in _TOOLS)}
PROFILES: dict[str, tuple[ToolSpec, ...]] = {
    profile: tuple(_SPECS[name] for name in names) for profile, names in PROFILE_TOOLS.items()
}


def tools_of(profile: str) -> dict[str, ToolSpec]:
    """The tools a profile may call, by name; an unknown profile has none."""
    return {spec.name: spec for spec in PROFILES.get(profile, ())}


@cache
def describe(profile: str) -> tuple[dict[str, Any], ...]:
    """The catalog shown to a chooser: name, description and argument JSON schema per tool.
    Cached (schemas are costly to build); callers hand choosers a copy."""
    return tuple(
        {
            "name": spec.name,
            "description": spec.description,
            "args": spec.args_model.model_json_schema(),
        }
        for spec in PROFILES.get(profile, ())
    )
