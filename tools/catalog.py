"""The tool catalog of each profile: names, argument models, record kinds, and run functions.

The catalog is documentation for a chooser and a lookup table for the guard and the executor; it
grants nothing by itself (the guard re-checks every call against the scenario's records).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from scenario.manifest import RecordKind
from scenario.profiles import PROFILE_TOOLS
from tools.analysis import analyze
from tools.analysis.query import AnalyzeArgs
from tools.args import ToolArgs
from tools.excerpt import Excerpt
from tools.logs import familytools, logsummary, readlines, readspec, runhistory, searchlogs
from tools.sta import diff as stadiff
from tools.sta import paths as sta_paths
from tools.sta import summary as sta


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
    """The kind of record those fields must name."""
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


SEARCHLOGS = ToolSpec(
    name="searchlogs",
    description=(
        "Lines of an approved log that contain a fixed string (case-sensitive), or match a"
        " regular expression with regex=true (^ and $ anchor lines), and how many match to the"
        " end of the log; context shows lines around each hit, after_line continues past hits"
        " already seen."
    ),
    args_model=searchlogs.SearchLogsArgs,
    record_fields=("path",),
    record_kind="log",
    run=searchlogs.run,
)
READLINES = ToolSpec(
    name="readlines",
    description=(
        "A range of an approved log's lines by number (at most 200 from `start`), to read around"
        " a hit."
    ),
    args_model=readlines.ReadLinesArgs,
    record_fields=("path",),
    record_kind="log",
    run=readlines.run,
)
LOGSUMMARY = ToolSpec(
    name="logsummary",
    description=(
        "What an approved simulation log says of itself: the UVM report summary, the first"
        " UVM_ERROR/UVM_FATAL per report id, the verdict line, Verilator/cocotb/pytest summaries."
    ),
    args_model=logsummary.LogSummaryArgs,
    record_fields=("path",),
    record_kind="log",
    run=logsummary.run,
)
READSPEC = ToolSpec(
    name="readspec",
    description="One section of an approved Markdown specification, by heading text or slug.",
    args_model=readspec.ReadSpecArgs,
    record_fields=("path",),
    record_kind="spec",
    run=readspec.run,
)
TRIAGE = ToolSpec(
    name="triage",
    description=(
        "A whole family of approved logs (a nightly) in one call: each member's verdict as its"
        " log states it, failures bucketed by their first error's masked signature (count,"
        " tests, first example as member:line), with an approved history each bucket new or"
        " known and tests that flip pass/fail flaky. One call instead of one logsummary per log:"
        " use it first on any family of more than a few logs."
    ),
    args_model=familytools.TriageArgs,
    record_fields=("history",),
    record_kind="history",
    run=familytools.run_triage,
    family_field="family",
    optional_records=("history",),
)
SEARCHFAMILY = ToolSpec(
    name="searchfamily",
    description=(
        "searchlogs over every log of a family in one call: matching lines counted in every"
        " member, and the family's first hits as member:line. One call instead of one"
        " searchlogs per log."
    ),
    args_model=familytools.SearchFamilyArgs,
    record_fields=(),
    record_kind="log",
    run=familytools.run_searchfamily,
    family_field="family",
)
GETRUNHISTORY = ToolSpec(
    name="getrunhistory",
    description="The most recent rows for one test in an approved run-history CSV.",
    args_model=runhistory.RunHistoryArgs,
    record_fields=("path",),
    record_kind="history",
    run=runhistory.run,
)

STASUMMARY = ToolSpec(
    name="stasummary",
    description=(
        "WNS, TNS and violating endpoints per path group, corner, mode and path type of an approved"
        " STA report, with its tns/wns lines, end/summary tables and warnings as reported."
    ),
    args_model=sta.ReportArgs,
    record_fields=("report",),
    record_kind="sta_report",
    run=sta.stasummary,
)
STAPATHS = ToolSpec(
    name="stapaths",
    description="The worst paths of an approved STA report, optionally of one group and status.",
    args_model=sta_paths.PathsArgs,
    record_fields=("report",),
    record_kind="sta_report",
    run=sta_paths.stapaths,
)
STAPATH = ToolSpec(
    name="stapath",
    description=(
        "One path of an approved STA report, with line numbers: the worst path of the type to the"
        " endpoint, in the corner and mode given or in any."
    ),
    args_model=sta_paths.PathArgs,
    record_fields=("report",),
    record_kind="sta_report",
    run=sta_paths.stapath,
)
STADIFF = ToolSpec(
    name="stadiff",
    description=(
        "Endpoints flipped, now unconstrained, added, removed or changed between two approved STA"
        " reports."
    ),
    args_model=stadiff.DiffArgs,
    record_fields=("before", "after"),
    record_kind="sta_report",
    run=stadiff.stadiff,
)
ANALYZE = ToolSpec(
    name="analyze",
    description=(
        "One SQL SELECT (DuckDB) over approved run histories and STA path tables loaded as"
        " tables (tables maps a name to a record id; an STA report's table has corner, mode,"
        " path_type, path_group, endpoint, startpoint, slack, status, unconstrained, truncated,"
        " line); family reads a family of logs as triage does into table verdicts (member, test,"
        " status, signature, note). Its result is computed, never a source fact; plot draws it"
        " into the report."
    ),
    args_model=AnalyzeArgs,
    record_fields=(),
    record_kind="history",
    run=analyze.run,
    tables_field=analyze.TABLES_FIELD,
    table_kinds=("history", "sta_report"),
    family_field="family",
    optional_records=("family",),
)

_SPECS = {
    spec.name: spec
    for spec in (
        SEARCHLOGS,
        READLINES,
        LOGSUMMARY,
        READSPEC,
        GETRUNHISTORY,
        TRIAGE,
        SEARCHFAMILY,
        STASUMMARY,
        STAPATHS,
        STAPATH,
        STADIFF,
        ANALYZE,
    )
}
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
