"""The family tools as the catalog calls them: `triage` and `searchfamily`, their strict arguments,
and their bodies over the records the guard resolved.

A family is named by the manifest's `glob`, exactly as written (`runs/nightly/*.log`), or by a list
of approved record ids; the guard resolves it (`Scenario.family`), and the executor hands the
members, found again through the admitted manifest, to the body. The reading itself, member by
member in a process pool, is `tools/logs/triage.py` and `tools/logs/searchfamily.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field, ValidationInfo, field_validator

from scenario.registry import Family, Record
from tools.args import HistoryId, Names, RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt
from tools.logs import searchfamily, triage
from tools.logs.familypool import Progress
from tools.logs.morning import with_report
from tools.stream.patterns import runnable

MAX_LISTED = 200
"""Record ids a call may list as its family; more are named by the manifest's glob."""

FamilyName = Annotated[
    Annotated[str, Field(min_length=1, max_length=1000)]
    | Annotated[list[RecordId], Field(min_length=1, max_length=MAX_LISTED)],
    Names("family", ("log",)),
]
"""A manifest's `glob`, exactly as written, or a list of approved record ids."""


class TriageArgs(ToolArgs):
    family: FamilyName
    """The family: a `glob` the manifest approves, as written, or a list of log record ids."""
    history: HistoryId | None = None
    """An approved run-history record: buckets marked new or known, tests marked flaky."""
    run: SearchText | None = None
    """This nightly's name in the history, if the history already holds it: its rows are left
    out, so today's failures are not taken as known from themselves."""


class SearchFamilyArgs(ToolArgs):
    family: FamilyName
    """The family: a `glob` the manifest approves, as written, or a list of log record ids."""
    regex: bool = False
    """`query` is a regular expression (as searchlogs takes it)."""
    query: SearchText
    """A fixed string (byte-exact, case-sensitive), or a regular expression with `regex=true`."""
    limit: Annotated[int, Field(ge=1, le=200)] = 20
    """How many hits to show, the family's first in member order."""

    @field_validator("query")
    @classmethod
    def _runnable(cls, query: str, info: ValidationInfo) -> str:
        return runnable(query, info.data.get("regex"), "searchfamily")


def run_triage(
    args: TriageArgs,
    records: Mapping[str, Record],
    family: Family,
    progress: Progress | None = None,
) -> Excerpt:
    """A whole family of approved logs (a nightly) in one call: each member's verdict as its log
    states it, failures bucketed by their first error's masked signature (count, tests, first
    example as member:line), with an approved history each bucket new or known and tests that flip
    pass/fail flaky. One call instead of one logsummary per log: use it first on any family of
    more than a few logs."""
    triaged, rows = triage.read_family(
        family.members, records.get("history"), run=args.run, progress=progress
    )
    return with_report(triage.excerpt(triaged), triaged, rows, args.run)


def run_searchfamily(
    args: SearchFamilyArgs,
    records: Mapping[str, Record],
    family: Family,
    progress: Progress | None = None,
) -> Excerpt:
    """searchlogs over every log of a family in one call: matching lines counted in every member,
    and the family's first hits as member:line. One call instead of one searchlogs per log."""
    return searchfamily.run_family(
        family.members, args.query, args.regex, args.limit, progress=progress
    )
