"""searchlogs: the lines of an approved log that match a fixed string or a regular expression.

Like `grep -n -m LIMIT` with its count (`grep -c`) in the same pass: byte-exact, one hit per line,
case-sensitive unless the regex says otherwise (`(?i)`); the total is counted to the end of the
log unless `count=false`. `regex=true` runs through Hyperscan in linear time whatever the pattern;
what it cannot run that way (back-references, lookaround, a pattern that matches an empty
string) is refused by the argument check, naming why. `context` shows lines around each hit
(grep -C), `after_line` continues past earlier hits. Memory is bounded by the read buffers and
the lines kept (`tools.logs.logscan`), not by the log's size.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from scenario.reading import open_record
from scenario.registry import Record
from tools.args import LogId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt
from tools.logs.logscan import DEFAULT_SIZES, MAX_SHOWN_LINES, Found, Search, Sizes, search
from tools.stream.patterns import Pattern, runnable

DEFAULTS: dict[str, Any] = {"count": True, "regex": False, "context": 0, "after_line": 0}
"""Arguments left out of a call's record when they have these values: receipts and call
signatures of plain searches read as they did before these arguments existed."""


class SearchLogsArgs(ToolArgs):
    path: LogId
    """The exact id of an approved `log` record."""
    regex: bool = False
    """`query` is a regular expression (Hyperscan's syntax: PCRE without back-references or
    lookaround; `^`/`$` anchor lines; `.` is one byte)."""
    query: SearchText
    """A fixed string (byte-exact, case-sensitive), or a regular expression with `regex=true`."""
    limit: Annotated[int, Field(ge=1, le=200)] = 20
    """How many matching lines to show."""
    count: bool = True
    """Count every matching line to the end of the log (false: stop once `limit` are shown)."""
    context: Annotated[int, Field(ge=0, le=10)] = 0
    """Lines shown before and after each hit (as `grep -C`); at most 400 lines in all."""
    after_line: Annotated[int, Field(ge=0)] = 0
    """Only lines after this one: to continue past hits already seen."""

    @field_validator("query")
    @classmethod
    def _runnable(cls, query: str, info: ValidationInfo) -> str:
        return runnable(query, info.data.get("regex"), "searchlogs")

    @property
    def pattern(self) -> Pattern:
        return Pattern(self.query, self.regex)

    @model_serializer(mode="wrap")
    def _defaults_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        for name, default in DEFAULTS.items():
            if name in dumped and dumped[name] == default and type(dumped[name]) is type(default):
                del dumped[name]
        return dumped


def run(args: SearchLogsArgs, records: Mapping[str, Record]) -> Excerpt:
    """Lines of an approved log that contain a fixed string (case-sensitive), or match a regular
    expression with regex=true (^ and $ anchor lines), and how many match to the end of the log;
    context shows lines around each hit, after_line continues past hits already seen."""
    with open_record(records["path"]) as stream:
        found = find(stream, args)
    lines = [found.lines[number] for number in sorted(found.lines)]
    return make_excerpt(summarize(args, found), lines, truncated=found.more)


def find(stream: io.BufferedIOBase, args: SearchLogsArgs) -> Found:
    request = Search(args.pattern, args.limit, args.count, args.after_line, args.context)
    return search(stream, request)


def summarize(args: SearchLogsArgs, found: Found) -> str:
    what = f"match /{args.query}/" if args.regex else f"contain {args.query!r}"
    where = f" after line {args.after_line}" if args.after_line else ""
    shown = len(found.hits)
    if not found.matching:
        summary = f"no line{where} {'matches' if args.regex else 'contains'} " + (
            f"/{args.query}/" if args.regex else repr(args.query)
        )
    elif found.counted:
        summary = f"{found.matching} line(s){where} {what} (counted to the end of the log)"
        if found.more:
            summary += f"; the first {shown} are shown"
    else:
        summary = f"{shown} line(s){where} {what}"
        if found.more:
            summary += (
                f"; more lines match beyond the limit of {args.limit} (not counted: count=false)"
            )
    if args.context and len(found.lines) >= MAX_SHOWN_LINES:
        summary += f"; context stopped at {MAX_SHOWN_LINES} lines shown"
    return summary


def find_lines(
    stream: io.BufferedIOBase, needle: bytes, limit: int, sizes: Sizes = DEFAULT_SIZES
) -> tuple[list[Line], bool]:
    """The first `limit` lines containing the fixed string `needle`, and whether another one
    follows (no count to the end): the search at its plainest."""
    request = Search(Pattern(needle.decode("utf-8", "surrogateescape")), limit, count=False)
    found = search(stream, request, sizes)
    return [found.lines[number] for number in found.hits], found.more
