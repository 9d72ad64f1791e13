"""readspec: one section of an approved Markdown specification, with line numbers.

A section is addressed by its heading text or its slug (`## reset_release` and `## Reset release`
both answer to `reset-release`) and runs to the next heading of the same or a higher level.
Headings are found as CommonMark finds them: ATX (`## x`, indented up to three spaces) and setext
(a paragraph underlined with `===` or `---`), never inside code or an HTML block; headings nested
in a list item or a block quote are not sections. The reading streams and stops once the section
is found: a tested property holds it to markdown-it-py's block parser on generated documents
(which parses whole documents, five times slower here: a 32 MiB spec would outlast a call). A repeated heading is addressed
as GitHub addresses it: `reset-release`, then `reset-release-1`, `reset-release-2`, …; GitHub's own
anchors answer too (`set-dont-use` for `Set Don't Use`). YAML front matter holds no heading.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from itertools import chain, islice
from typing import NamedTuple

from contract.codes import RefusalCode
from contract.errors import RecordRefusal
from scenario.reading import open_record
from scenario.registry import Record
from tools.args import SearchText, SpecId, ToolArgs
from tools.excerpt import Excerpt, Line, make_excerpt, make_line
from tools.flags import normalise
from tools.stream.lines import iter_lines, without_bom

MAX_SECTION_LINES = 150
MAX_SETEXT_LINES = 10
"""A longer paragraph is never taken for a setext heading: it bounds the lines held back."""
MAX_FRONT_MATTER_LINES = 200
"""YAML front matter is looked for this far; an opening `---` not closed by then is a break."""
MAX_LISTED = 20
"""Headings named when the section asked for is not found, or when several share a heading."""

_PUNCTUATION = re.compile(r"[^\w\s-]")
_ATX = re.compile(rb"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSING = re.compile(rb"(?:^|[ \t]+)#+$")
_FENCE = re.compile(rb"^ {0,3}(`{3,}|~{3,})(.*)$")
_FENCE_CLOSING = re.compile(rb"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_UNDERLINE = re.compile(rb"^ {0,3}(=+|-+)[ \t]*$")
_BREAK = re.compile(rb"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_ITEM = re.compile(rb"^( {0,3})([-+*]|\d{1,9}[.)])(?:[ \t]+|$)")
_QUOTE = re.compile(rb"^ {0,3}>")
_HTML_CLOSED = (
    (
        re.compile(rb"<(?:script|pre|style|textarea)(?:[ \t>]|$)", re.I),
        re.compile(rb"</(?:script|pre|style|textarea)>", re.I),
    ),
    (re.compile(rb"<!--"), re.compile(rb"-->")),
    (re.compile(rb"<\?"), re.compile(rb"\?>")),
    (re.compile(rb"<![A-Za-z]"), re.compile(rb">")),
    (re.compile(rb"<!\[CDATA\["), re.compile(rb"\]\]>")),
)
"""HTML blocks that end at a line holding their end marker (it may be the first line)."""
_HTML_BLOCK_TAG = re.compile(
    rb"</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd"
    rb"|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset"
    rb"|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol"
    rb"|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr"
    rb"|track|ul)(?:[ \t>]|/>|$)",
    re.I,
)
"""An HTML block of a block-level tag: it ends at a blank line."""
_HTML_LONE_TAG = re.compile(
    rb"(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
    rb"|</[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$"
)
"""A line that is one complete open or closing tag: an HTML block that ends at a blank line."""
_TABLE_DELIMITER = re.compile(rb"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


class ReadSpecArgs(ToolArgs):
    path: SpecId
    """The exact id of an approved `spec` record."""
    section: SearchText
    """A heading's text or slug."""


class Heading(NamedTuple):
    level: int
    """1 for `#` or a `===` underline, 2 for `##` or `---`, … 6."""
    text: str
    """Without its `#` marks; a setext heading's lines joined by spaces."""


class _Block(Enum):
    """The open block that a line after it continues; only a paragraph can become a heading."""

    NONE = "none"
    PARAGRAPH = "paragraph"
    CODE = "code"
    OTHER = "other"
    """A list item, block quote, table or over-long paragraph: text under it continues it, and
    `---` under it is a thematic break."""


Marked = tuple[int, bytes, Heading | None]
"""A line's number, the line, and the heading that starts on it (None for most lines)."""


@dataclass
class _Section:
    heading: Heading | None = None
    lines: list[Line] = field(default_factory=list)
    truncated: bool = False
    listed: list[str] = field(default_factory=list)
    """The slugs of the first `MAX_LISTED` headings before it (or in all, when it is not found)."""
    namesakes: list[str] = field(default_factory=list)
    """The slugs of the later sections whose heading has the same slug as this one's."""


def slug(text: str) -> str:
    """Lower-case words joined by `-`: `Reset release`, `reset_release` → `reset-release`."""
    return re.sub(r"[\W_]+", "-", normalise(text).casefold()).strip("-")


def github_anchor(text: str) -> str:
    """The heading's anchor as GitHub makes it, in `slug`'s form: punctuation other than `-` and
    `_` is dropped, not a word break (`Set Don't Use` → `set-dont-use`, `I/O timing` →
    `io-timing`)."""
    return slug(_PUNCTUATION.sub("", normalise(text)))


def run(args: ReadSpecArgs, records: Mapping[str, Record]) -> Excerpt:
    """One section of an approved Markdown specification, by heading text or slug."""
    if records["path"].media == "pdf":
        raise RecordRefusal(
            RefusalCode.INVALID_ARGUMENT,
            f"{records['path'].id} is a PDF: readspec reads Markdown sections; read its pages"
            " with readpages",
        )
    wanted = slug(args.section.strip().lstrip("#"))
    if not wanted:  # no letter or digit: it would match any heading made of punctuation alone
        return make_excerpt(
            f"no section {args.section!r}: a section name needs a letter or digit", (), False
        )
    with open_record(records["path"]) as stream:
        found = _find_section(marked_lines(without_bom(iter_lines(stream))), wanted)
    section = found.lines
    while section and not section[-1].text.strip():
        section.pop()
    if found.heading is None:
        known = ", ".join(found.listed) or "none"
        return make_excerpt(f"no section {args.section!r}; sections: {known}", (), False)
    summary = f"section {found.heading.text!r}: lines {section[0].number}–{section[-1].number}"
    if found.truncated:
        summary += f" (first {len(section)} lines shown)"
    if found.namesakes:
        others = ", ".join(repr(other) for other in found.namesakes[:MAX_LISTED])
        more = len(found.namesakes) > MAX_LISTED
        count = f"more than {MAX_LISTED + 1}" if more else str(len(found.namesakes) + 1)
        summary += (
            f"; {count} sections share this heading,"
            f" this is the first; address the others as {others}{'…' if more else ''}"
        )
    return make_excerpt(summary, section, found.truncated)


def _find_section(lines: Iterator[Marked], wanted: str) -> _Section:
    """The wanted section. Reading goes on past its end only when it was addressed without a
    suffix, to name the later sections whose heading has the same slug (until one more than can be
    listed is found)."""
    found = _Section()
    taken: dict[str, int] = {}
    anchors: dict[str, int] = {}  # GitHub's anchors, numbered on their own
    counting = ended = False
    for number, raw, heading in lines:
        base = slug(heading.text) if heading else ""
        unique = _unique_slug(base, taken) if heading else ""
        anchor = _unique_slug(github_anchor(heading.text), anchors) if heading else ""
        if found.heading is None:
            if heading and wanted in (unique, anchor):
                found.heading = heading
                counting = base == wanted or github_anchor(heading.text) == wanted
                found.lines.append(make_line(number, raw))
            elif heading and len(found.listed) < MAX_LISTED:
                found.listed.append(unique)
            continue
        ended = ended or (heading is not None and heading.level <= found.heading.level)
        if counting and heading and wanted in (base, github_anchor(heading.text)):
            found.namesakes.append(unique)
            counting = len(found.namesakes) <= MAX_LISTED  # one more than shown: enough to say so
        if not ended and len(found.lines) < MAX_SECTION_LINES:
            found.lines.append(make_line(number, raw))
        else:
            found.truncated = found.truncated or not ended
            if not counting:
                break
    return found


def _unique_slug(base: str, taken: dict[str, int]) -> str:
    """GitHub's slug for a repeated heading: `x`, then `x-1`, `x-2`, …, skipping a slug that an
    earlier heading already has (github-slugger's rule)."""
    unique = base
    while unique in taken:
        taken[base] += 1
        unique = f"{base}-{taken[base]}"
    taken[unique] = 0
    return unique


def marked_lines(lines: Iterator[tuple[int, bytes]]) -> Iterator[Marked]:
    """Each line, marked with the heading that starts on it: YAML front matter first (a `---`
    first line closed by `---` or `...` within `MAX_FRONT_MATTER_LINES`: metadata, no heading),
    then the document's blocks."""
    lines = iter(lines)
    first = list(islice(lines, 1))
    if first and first[0][1].rstrip() == b"---":
        held = [*first, *islice(lines, MAX_FRONT_MATTER_LINES)]
        end = next(
            (i for i, (_, raw) in enumerate(held) if i and raw.rstrip() in (b"---", b"...")), 0
        )
        yield from _plain(held[: end + 1] if end else [])
        first = held[end + 1 :] if end else held
    yield from _blocks(chain(first, lines))


def _blocks(lines: Iterator[tuple[int, bytes]]) -> Iterator[Marked]:
    """Each line, marked with the heading that starts on it (CommonMark's block structure, as far
    as it decides headings). A paragraph's lines are held back until it is known whether an
    underline makes it a setext heading, which starts on the paragraph's first line.
    """
    block = _Block.NONE
    held: list[tuple[int, bytes]] = []
    list_indent = -1  # the column of the open list item's text; -1 outside a list
    fence = b""  # the open code fence's run of backticks or tildes
    html_ends: Callable[[bytes], bool] | None = None  # the open HTML block's end condition
    for number, raw in lines:
        if fence or html_ends:  # inside a fenced code block or an HTML block
            yield number, raw, None
            if fence and _closes(fence, raw):
                fence = b""
            elif html_ends and html_ends(raw):
                html_ends = None
            continue
        if block is _Block.PARAGRAPH and (level := _underline_level(raw)):
            yield from _setext(held, level)
            yield number, raw, None
            held, block = [], _Block.NONE
            continue
        if block is _Block.PARAGRAPH and _is_table_start(held, raw):
            yield from _plain(held)
            yield number, raw, None
            held, block = [], _Block.OTHER
            continue
        fence = _opening_fence(raw)
        html_ends = None if fence else _html_block(raw, block)
        inner = raw[list_indent:] if 0 <= list_indent <= _indent(raw) else None  # an item's content
        heading = None if fence or html_ends or inner is not None else _atx(raw)
        # A heading in a list item is no section, and leaves no paragraph for text to continue.
        nested = inner is not None and not fence and not html_ends and _atx(inner) is not None
        if fence or html_ends or heading or nested or not raw.strip() or _BREAK.match(raw):
            yield from _plain(held)
            yield number, raw, heading
            held, block = [], _Block.NONE
            if raw.strip() and _indent(raw) < list_indent:  # a block left of the item's text
                list_indent = -1  # ends the list
            if html_ends and html_ends(raw):  # an HTML block that ends on its first line
                html_ends = None
            continue
        if block is _Block.CODE and _indent(raw) < 4:
            block = _Block.NONE
        if block is _Block.PARAGRAPH and not _interrupts(raw):
            held.append((number, raw))
            if len(held) > MAX_SETEXT_LINES:
                yield from _plain(held)
                held, block = [], _Block.OTHER
            continue
        yield from _plain(held)
        held = []
        item = _LIST_ITEM.match(raw)
        if block is _Block.NONE and not item and _indent(raw) < list_indent:
            list_indent = -1  # after a blank line, text left of a list item's text ends the list
        if item:
            list_indent, block = len(item[1]) + len(item[2]) + 1, _Block.OTHER
        elif _QUOTE.match(raw) and _indent(raw) < list_indent:  # a block quote left of the
            list_indent, block = -1, _Block.OTHER  # item's text ends the list, as any block does
        elif _QUOTE.match(raw) or (block is _Block.NONE and list_indent >= 0):
            block = _Block.OTHER
        elif block is _Block.NONE and _indent(raw) >= 4:
            block = _Block.CODE
        elif block is _Block.NONE:
            held, block = [(number, raw)], _Block.PARAGRAPH
            continue
        yield number, raw, None
    yield from _plain(held)


def _html_block(raw: bytes, block: _Block) -> Callable[[bytes], bool] | None:
    """The end condition of the HTML block the line starts (CommonMark's seven kinds), or None.
    The seventh kind, a lone tag, cannot interrupt a paragraph; the others can."""
    if _indent(raw) >= 4:
        return None
    line = raw.lstrip(b" ")
    for start, end in _HTML_CLOSED:
        if start.match(line):
            return functools.partial(_holds, end)
    if _HTML_BLOCK_TAG.match(line) or (
        block not in (_Block.PARAGRAPH, _Block.OTHER) and _HTML_LONE_TAG.match(line)
    ):
        return _blank
    return None


def _holds(end: re.Pattern[bytes], raw: bytes) -> bool:
    return end.search(raw) is not None


def _blank(raw: bytes) -> bool:
    return not raw.strip()


def _plain(held: list[tuple[int, bytes]]) -> Iterator[Marked]:
    return ((number, raw, None) for number, raw in held)


def _setext(held: list[tuple[int, bytes]], level: int) -> Iterator[Marked]:
    text = " ".join(raw.strip().decode("utf-8", "replace") for _, raw in held)
    (first, raw), *rest = held
    yield first, raw, Heading(level, text)
    yield from _plain(rest)


def _atx(raw: bytes) -> Heading | None:
    match = _ATX.match(raw)
    if match is None:
        return None
    text = _ATX_CLOSING.sub(b"", (match[2] or b"").strip()).strip()
    return Heading(len(match[1]), text.decode("utf-8", "replace"))


def _opening_fence(raw: bytes) -> bytes:
    """The fence's run of backticks or tildes, or `b""` when the line opens none."""
    match = _FENCE.match(raw)
    if match is None or (match[1][:1] == b"`" and b"`" in match[2]):
        return b""  # a backtick in a backtick fence's info string makes it inline code
    return match[1]


def _closes(fence: bytes, raw: bytes) -> bool:
    """A closing fence uses the opening's character, at least as many times (CommonMark)."""
    match = _FENCE_CLOSING.match(raw)
    return match is not None and match[1][0] == fence[0] and len(match[1]) >= len(fence)


def _underline_level(raw: bytes) -> int:
    match = _UNDERLINE.match(raw)
    return 0 if match is None else 1 if match[1][:1] == b"=" else 2


def _is_table_start(held: list[tuple[int, bytes]], raw: bytes) -> bool:
    """A GFM table's delimiter row under a header row: the table is no paragraph."""
    return b"|" in held[-1][1] and _TABLE_DELIMITER.match(raw) is not None


def _interrupts(raw: bytes) -> bool:
    """Whether the line ends a paragraph: a block quote, or a list item that may start there
    (a bullet or `1.` with text; `2. x` under a paragraph is paragraph text)."""
    item = _LIST_ITEM.match(raw)
    if item is not None:
        ordered = item[2][-1:] in b".)"
        return bool(raw[item.end() :].strip()) and (not ordered or int(item[2][:-1]) == 1)
    return _QUOTE.match(raw) is not None


def _indent(raw: bytes) -> int:
    """Leading columns, a tab counting to the next multiple of 4."""
    return len(raw[: len(raw) - len(raw.lstrip(b" \t"))].expandtabs(4))
