"""A fast first pass over `report_checks` text: one row per path, close to the speed of a read.

The report is read in chunks and cut into path blocks at `Startpoint:` lines. A block in the layout
OpenSTA writes — `Startpoint`, `Endpoint`, `Path Group`, `Path Type`, optional `Mode` and `Corner`
lines in that order, a table with no other `label:` line, and one slack line at its end — is read
by one regular-expression match and never split into lines. Every other block (wrapped points,
unconstrained or truncated paths, warnings, `end`/`summary` tables, tns/wns lines) goes line by
line through `tools.sta.report.Parser`, which stays the reference: tests check that both readers
give the same paths. Memory is bounded by a chunk (and by one path, for a path larger than that).

Items other than paths (tns/wns lines, `-format end`/`summary` table rows, notices) come from the
line parser as they are. A row keeps what ranking and matching need, and where its block starts (`line`, `offset`): a
tool describes only the rows it shows, from the block's text, through the line parser.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, repeat
from operator import add, and_, gt, ne
from typing import Any, NamedTuple

from tools.sta.items import Item, StaPath
from tools.sta.names import ARRIVAL, encoded, endpoint_pin
from tools.sta.path_layouts import OPENERS
from tools.sta.report import Parser, parse
from tools.stream.lines import MAX_LINE_BYTES, iter_lines
from tools.stream.literals import count_literals

CHUNK_BYTES = 4 << 20
LABEL = b"Startpoint: "
SEPARATOR = b"\n" + LABEL
_NUMBER = rb"-?\d++(?:\.\d++)?+(?:[eE][-+]?\d++)?+"
_WORD = rb"[!-9;-~]++"
"""Printable ASCII but `:`: values the line parser would read alike, whatever it strips."""
_POINT = rb"[ \t]*+([!-~]++)(?: \([ -'*-9;-~]*+\))?[ \t\r]*+\n"
"""A Startpoint/Endpoint name with no space, then its reason (no parentheses inside) if given."""
_VALUE = rb"[ \t]*+(" + _WORD + rb"(?: ++" + _WORD + rb")*+)[ \t\r]*+\n"
_CANONICAL = re.compile(
    _POINT
    + b"Endpoint: "
    + _POINT
    + b"Path Group: "
    + _VALUE
    + b"Path Type: "
    + _VALUE
    + b"(?:Mode: "
    + _VALUE
    + b")?(?:Corner: "
    + _VALUE
    + b")?[^:]*\n[ \t]*+("  # a table without a `label:` line, up to the slack line at the end
    + _NUMBER
    + rb")[ \t]++slack \((MET|VIOLATED)\)[ \t\r\n]*+\Z"
)
_GROUPS = re.Match.groups
_UNCONSTRAINED = (b"nconstrained", b"NCONSTRAINED")
"""The spellings `tools.sta.report` accepts in an `(… unconstrained)` line."""
_CHECKED = (b"slack (", *_UNCONSTRAINED)
"""What every chunk is counted for, in one pass (`_faithful_chunk`)."""


class Row(NamedTuple):
    """One path, as the STA tools rank and match it (text fields are the report's bytes)."""

    key: tuple[bytes | None, bytes | None, bytes | None, bytes | None, bytes]
    """How `stadiff` matches endpoints: (corner, mode, path type, group, endpoint name)."""
    start: bytes
    """The startpoint's name."""
    slack: float | None
    """None for an unconstrained or truncated path."""
    status: bytes | None
    truncated: bool
    unconstrained: bool
    line: int
    """The number of the path's Startpoint line."""
    offset: int
    """The byte offset of that line in the (decompressed) report."""

    @property
    def endpoint(self) -> bytes:
        return self.key[4]

    @property
    def group(self) -> bytes | None:
        return self.key[3]

    @property
    def path_type(self) -> bytes | None:
        return self.key[2]

    @property
    def corner(self) -> bytes | None:
        return self.key[0]


Scanned = Row | Item
"""A path as a row, every other item as the line parser reads it; a `StaPath` only for a
`-format short` path (no slack) or a `-format json` one (no text to describe it from); the
report's `Extent` last."""


def scan(stream: io.BufferedIOBase, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Scanned]:
    """Rows and tns/wns metrics in report order, reading `chunk_bytes` at a time."""
    reader = _Reader()
    carry = b""
    while data := stream.read(chunk_bytes):
        text = carry + data if carry else data
        cut = text.rfind(SEPARATOR) + 1
        if cut:
            yield from reader.blocks(text[:cut])
        elif cut := text.rfind(b"\n") + 1:
            # No block ends here (a path longer than a chunk, or text between paths): whole
            # lines go to the line parser.
            yield from reader.lines(text[:cut])
        elif reader.partial_line:  # still the rest of an overlong line: dropped
            yield from reader.lines(b"", consumed=len(text))
            cut = len(text)
        elif len(text) >= MAX_LINE_BYTES:  # an overlong line: keep its start, drop the rest
            yield from reader.lines(text[:MAX_LINE_BYTES], cut=True, consumed=len(text))
            cut = len(text)
        carry = text[cut:]
    if carry:
        yield from reader.blocks(carry)
    yield from reader.finish()


class _Reader:
    """Where the scan is (line number, byte offset) and the line parser for the other blocks."""

    def __init__(self) -> None:
        self.parser = Parser()
        self.line = 1
        self.offset = 0
        self.partial_line = False
        """The last line given to the parser was cut short: what follows up to a newline is dropped."""
        self.shared: dict[bytes | None, bytes | None] = {}
        """One copy of each group, corner, mode, path type and status: they repeat on every row."""
        self.starts: dict[int, int] = {}
        """Byte offsets of the Startpoint lines the line parser saw, by line number."""

    def blocks(self, text: bytes) -> Iterator[Scanned]:
        """Rows of the path blocks in `text`, which ends at a block boundary or the report's end."""
        pieces = text.split(SEPARATOR)
        if text.startswith(LABEL) and not self.partial_line:  # else: the rest of a cut line
            pieces[0] = pieces[0][len(LABEL) :]
        else:
            prologue = pieces.pop(0)
            consumed = len(prologue) + bool(pieces)  # and the newline before the first block
            yield from self.lines(prologue, followed=bool(pieces), consumed=consumed)
        if pieces and self.parser.unread is not None:  # ended by the next Startpoint line
            self.parser.said()
            yield from self._drain()
        matches = list(map(_CANONICAL.match, pieces))
        arrivals = list(map(bytes.find, pieces, repeat(ARRIVAL)))  # the line parser's first
        if not _faithful_chunk(text, pieces, matches):
            matches = [
                _faithful(block, match) for block, match in zip(pieces, matches, strict=True)
            ]
        canonical = [match for match in matches if match is not None]
        open_path = self.parser.path or self.parser.layout  # left open by the last chunk
        if pieces and not open_path and len(canonical) == len(matches):
            yield from self._canonical_rows(pieces, canonical, arrivals)
            return
        last = len(pieces) - 1
        line, offset, parser, share = self.line, self.offset, self.parser, self.shared.setdefault
        for index, (block, match, arrival) in enumerate(
            zip(pieces, matches, arrivals, strict=True)
        ):
            followed = index < last  # by the newline of the next block's Startpoint line
            size = len(LABEL) + len(block) + followed
            if match is None:
                self.line, self.offset = line, offset
                yield from self.lines(LABEL + block, followed=followed, consumed=size)
                line, offset = self.line, self.offset
                continue
            if parser.path or parser.layout or parser.unread:
                parser.interrupted()  # a path ended by this block's Startpoint line
                parser.said()  # and lines before it that no reader understood
                yield from self._drain()
            [endpoint] = _endpoints([block], [match], [arrival])
            yield _canonical_row(match.groups(), endpoint, line, offset, share)
            line += block.count(b"\n") + (followed or not block.endswith(b"\n"))
            offset += size
        self.line, self.offset = line, offset

    def _canonical_rows(
        self, blocks: list[bytes], matches: list[re.Match[bytes]], arrivals: list[int]
    ) -> list[Row]:
        """The rows of a chunk whose blocks are all canonical (the common case), in one pass:
        line numbers and offsets are running sums of each block's newlines and length."""
        gaps = map(add, map(bytes.count, blocks[:-1], repeat(b"\n")), repeat(1))
        lines = list(accumulate(gaps, initial=self.line))
        offsets = list(
            accumulate(map(add, map(len, blocks[:-1]), repeat(len(SEPARATOR))), initial=self.offset)
        )
        last = blocks[-1]
        self.line = lines[-1] + last.count(b"\n") + (not last.endswith(b"\n"))
        self.offset = offsets[-1] + len(LABEL) + len(last)
        share = self.shared.setdefault
        endpoints = _endpoints(blocks, matches, arrivals)
        return [
            _canonical_row(fields, endpoint, line, offset, share)
            for fields, endpoint, line, offset in zip(
                map(_GROUPS, matches), endpoints, lines, offsets, strict=True
            )
        ]

    def lines(
        self, text: bytes, followed: bool = False, cut: bool = False, consumed: int | None = None
    ) -> Iterator[Scanned]:
        """Feed `text` to the line parser line by line. `followed`: a newline follows it in the
        report, so its last part is a whole line, even if empty; `cut`: its last line goes on
        (an overlong line, whose rest is dropped); `consumed`: the report bytes it stands for."""
        parts = text.split(b"\n")
        if not followed and (text.endswith(b"\n") or not text):
            parts.pop()
        position = self.offset
        if self.partial_line:  # the first part is the rest of a line already counted
            if b"\n" in text or followed:
                self.partial_line = False
                self.line += 1
                position += len(parts.pop(0)) + 1 if parts else 0
            else:
                parts = []
        for part in parts:
            line = part[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")
            opens = line.lstrip().startswith(OPENERS)  # as the parser strips it
            self.parser.feed(self.line, line)
            if opens and _opened_at(self.parser) == self.line:
                self.starts[self.line] = position
            self.line += 1
            position += len(part) + 1
        if cut and parts:
            self.line -= 1
            self.partial_line = True
        self.offset += len(text) if consumed is None else consumed
        yield from self._drain()

    def finish(self) -> Iterator[Scanned]:
        """The end: the parser closes what is open and says the report's length, as counted
        here (it did not see the lines of the blocks read as rows)."""
        self.parser.finish(self.line - 1 + self.partial_line)
        yield from self._drain()

    def _drain(self) -> Iterator[Scanned]:
        for item in self.parser.drain():
            if isinstance(item, StaPath) and not (item.short or item.from_json):
                yield _row_of_path(item, self.starts.pop(item.first_line, -1))
            else:
                yield item


def _opened_at(parser: Parser) -> int:
    """The first line of the path the parser is reading (0 if none): a `Startpoint:` inside a
    Cadence path is not one."""
    if parser.layout is not None:
        return int(parser.layout.fields["first_line"])
    return int(parser.path["first_line"]) if parser.path is not None else 0


def _faithful_chunk(
    text: bytes, blocks: list[bytes], matches: list[re.Match[bytes] | None]
) -> bool:
    """Whether no canonical match hides a line the line parser would read otherwise, for all
    blocks at once. The pattern already keeps `label:` lines out of a table; what is left: each
    canonical block has one `slack (` and no unconstrained mark, so the text holds as many of
    each as the canonical blocks hold plus those of the blocks that go line by line (one pass
    over the text counts all three)."""
    if max(map(len, blocks), default=0) + len(LABEL) > MAX_LINE_BYTES:
        return False  # a block may hold a line the line parser cuts short
    slow = [block for block, match in zip(blocks, matches, strict=True) if match is None]
    expected = [len(blocks) - len(slow), 0, 0]
    for block in slow:
        for index, literal in enumerate(_CHECKED):
            expected[index] += block.count(literal)
    return count_literals(text, _CHECKED) == expected


def _faithful(block: bytes, match: re.Match[bytes] | None) -> re.Match[bytes] | None:
    """The match if this block holds nothing the line parser would read otherwise."""
    if match is None or block.count(b"slack (") != 1:
        return None
    if len(LABEL) + len(block) > MAX_LINE_BYTES:
        return None  # it may hold a line the line parser cuts short
    return None if any(mark in block for mark in _UNCONSTRAINED) else match


def _endpoints(
    blocks: list[bytes], matches: list[re.Match[bytes]], arrivals: list[int]
) -> list[bytes]:
    """Each canonical block's endpoint: the pin named by the line above the block's first
    `data arrival time`, if that line comes after the `Endpoint:` line (as the line parser reads
    it), else the `Endpoint:` name. Done for a whole chunk in C-level passes; only a row that
    names `endpoint/…` is read further (`tools.sta.names.endpoint_pin`)."""
    rfind = bytes.rfind
    names = list(map(re.Match.group, matches, repeat(2)))
    ends = list(map(rfind, blocks, repeat(b"\n"), repeat(0), arrivals))
    starts = list(map(add, map(rfind, blocks, repeat(b"\n"), repeat(0), ends), repeat(1)))
    found = map(bytes.find, blocks, map(add, names, repeat(b"/")), starts, ends)
    late = map(gt, arrivals, map(re.Match.start, matches, repeat(3)))
    pinned = list(map(and_, map(ne, found, repeat(-1)), late))
    if not any(pinned):
        return names
    return [
        endpoint_pin(block[start:end], name) if is_pinned else name
        for block, name, start, end, is_pinned in zip(
            blocks, names, starts, ends, pinned, strict=True
        )
    ]


def _canonical_row(
    fields: tuple[bytes, ...],
    endpoint: bytes,
    line: int,
    offset: int,
    share: Callable[[Any, Any], Any],
) -> Row:
    """The row of a canonical match; `share` keeps one copy of each repeated value."""
    start, _, group, path_type, mode, corner, slack, status = fields
    key = (
        share(corner, corner),
        share(mode, mode),
        share(path_type, path_type),
        share(group, group),
        endpoint,
    )
    return _new_row(
        Row, (key, start, float(slack), share(status, status), False, False, line, offset)
    )


_new_row = tuple.__new__
"""Row's fields in order, without NamedTuple's keyword handling: the scan makes one per path."""


def _row_of_path(path: StaPath, offset: int) -> Row:
    key = (
        encoded(path.corner),
        encoded(path.mode),
        encoded(path.path_type),
        encoded(path.group),
        encoded(path.endpoint),
    )
    return Row(
        key,
        encoded(path.startpoint),
        path.slack,
        encoded(path.status),
        path.truncated,
        path.unconstrained,
        path.first_line,
        offset,
    )


def describe(rows: Iterable[Row], stream: io.BufferedIOBase) -> dict[int, StaPath]:
    """The line parser's reading of the blocks these rows came from, by line number; each block
    is found by seeking to its offset (in order, so a gzip stream is decompressed once)."""
    found: dict[int, StaPath] = {}
    for row in sorted(set(rows), key=lambda row: row.offset):
        stream.seek(row.offset)
        found[row.line] = _first_path(stream, row.line)
    return found


def _first_path(stream: io.BufferedIOBase, line: int) -> StaPath:
    """The first path read from here on (`parse` is lazy: it reads no further than that path)."""
    lines = (
        (line + number - 1, raw.decode("utf-8", "replace")) for number, raw in iter_lines(stream)
    )
    return next(item for item in parse(lines) if isinstance(item, StaPath))
