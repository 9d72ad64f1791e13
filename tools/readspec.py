"""readspec: one section of an approved Markdown specification, with line numbers.

A section is addressed by its heading text or its slug (`## reset_release` and `## Reset release`
both answer to `reset-release`) and runs to the next heading of the same or a higher level.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from tools.args import RecordId, SearchText, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.flags import normalise
from tools.lines import iter_lines
from tools.records import Record, open_record

MAX_SECTION_LINES = 150
_HEADING = re.compile(rb"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(rb"^\s{0,3}(```|~~~)")


class ReadSpecArgs(ToolArgs):
    path: RecordId
    """The exact id of an approved `spec` record."""
    section: SearchText
    """A heading's text or slug."""


def slug(text: str) -> str:
    """Lower-case words joined by `-`: `Reset release`, `reset_release` → `reset-release`."""
    return re.sub(r"[\W_]+", "-", normalise(text).casefold()).strip("-")


def run(args: ReadSpecArgs, records: Mapping[str, Record]) -> Excerpt:
    wanted = slug(args.section.strip().lstrip("#"))
    with open_record(records["path"]) as stream:
        section, truncated, headings = _find_section(iter_lines(stream), wanted)
    while section and not section[-1].text.strip():
        section.pop()
    if not section:
        known = ", ".join(headings[:20]) or "none"
        return make_excerpt(f"no section {args.section!r}; sections: {known}", (), False)
    shown = len(section)
    summary = (
        f"section {section[0].text.lstrip('# ')!r}: lines {section[0].number}–{section[-1].number}"
    )
    if truncated:
        summary += f" (first {shown} lines shown)"
    return make_excerpt(summary, section, truncated)


def _find_section(
    lines: Iterator[tuple[int, bytes]], wanted: str
) -> tuple[list[Line], bool, list[str]]:
    """The wanted section's lines, whether it was cut, and the slugs of the headings seen."""
    section: list[Line] = []
    level = 0
    headings: list[str] = []
    for number, raw, heading in _headings(lines):
        if section:
            if heading and heading[0] <= level:
                return section, False, headings
            if len(section) == MAX_SECTION_LINES:
                return section, True, headings
            section.append(make_line(number, raw))
        elif heading:
            headings.append(slug(heading[1]))
            if headings[-1] == wanted:
                level = heading[0]
                section.append(make_line(number, raw))
    return section, False, headings


def _headings(
    lines: Iterator[tuple[int, bytes]],
) -> Iterator[tuple[int, bytes, tuple[int, str] | None]]:
    """Each line with `(level, text)` when it is a heading outside a fenced code block."""
    fenced = False
    for number, raw in lines:
        if _FENCE.match(raw):
            fenced = not fenced
        match = None if fenced else _HEADING.match(raw)
        heading = (len(match[1]), match[2].decode("utf-8", "replace")) if match else None
        yield number, raw, heading
