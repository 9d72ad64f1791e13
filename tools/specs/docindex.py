"""The passages `searchdocs` ranks, and their ranking: each approved Markdown spec's sections (its
headings found as readspec finds them, `marked_lines`) and each PDF spec's pages (`pdfpages.py`),
read through the records' hashed streams, indexed in an in-memory SQLite FTS5 table and ranked by
FTS5's BM25.

What a version's reading found is kept in this process keyed by that version's sha256, and the
index of a set of versions keyed by theirs: a second search of the same specs extracts no PDF text
and builds no index (for 2,000 PDF pages, seconds of pdfium). Every call still opens every spec
through its hashed stream, so the reading session proves at the call's end that each file is the
version admitted, or refuses it `record_changed`, as for every tool; and a version is kept only
once the bytes read were hashed here to its admitted sha256, so a file changed under a call is
searched that once, then refused, and never kept. A gzip-compressed spec is read on every call
(its sha256 is its file's, not its text's). The memory is bounded (`KEPT_CHARS`, `KEPT_INDEXES`).

A section here runs to the next heading of any level (readspec's runs to the next of its own level
or higher): a passage is the text under one heading, so a nested section is not ranked twice.
Words are what FTS5's `unicode61` tokenizer makes of the text, with `_` kept inside a word so an
identifier (`clk_en`) is one word; the query's words are matched whole, without stemming.
"""

from __future__ import annotations

import hashlib
import io
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from scenario.reading import check_time, open_record
from scenario.registry import Record
from tools.logs.readspec import marked_lines
from tools.specs.pdfpages import UnreadablePdf, page_lines, page_texts
from tools.stream.lines import iter_lines, without_bom

if TYPE_CHECKING:
    import sqlite3

WORD = re.compile(r"\w+")
"""A word as the index's tokenizer takes one (letters, digits and `_`), in the query and in a
passage's lines."""
_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_'"
MAX_PAGES = 1 << 20
KEPT_CHARS = 64 << 20
"""Characters of passage text kept over all versions, and over all indexes (the oldest dropped
first): 2,000 pages of 40 lines are about 6 million."""
KEPT_INDEXES = 2
TIME_CHECK_EVERY = 64


@dataclass(frozen=True)
class Passage:
    """A section of a Markdown spec, or a page of a PDF one: where it is and its numbered lines."""

    record: Record
    place: str
    """`section 'Reset release'`, `before the first heading`, or `page 14`."""
    page: int | None
    """The page of a PDF's passage (its lines are numbered within it); None for Markdown."""
    lines: tuple[tuple[int, str], ...]
    """Each line's number (in the file, or in its page) and text."""


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float
    """BM25's score, higher for a better match (FTS5's `bm25()` negated)."""


@dataclass(frozen=True)
class Read:
    """The passages of the specs read, and what could not be read of them."""

    passages: list[Passage]
    unknowns: list[str]
    kept: bool = False
    """Whether every version read is one kept (its bytes hashed to its admitted sha256)."""


@dataclass(frozen=True)
class _Piece:
    """A passage of a version, before it is a record's."""

    place: str
    page: int | None
    lines: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class _Version:
    """What reading a version found: its passages, its pages without text, or pdfium's reason."""

    pieces: tuple[_Piece, ...]
    blank: tuple[int, ...] = ()
    unreadable: str | None = None
    chars: int = field(init=False)

    def __post_init__(self) -> None:
        chars = sum(len(text) for piece in self.pieces for _, text in piece.lines)
        object.__setattr__(self, "chars", chars)


@dataclass(frozen=True)
class _Index:
    read: Read
    connection: sqlite3.Connection
    lock: threading.Lock
    chars: int


Kept = TypeVar("Kept", _Version, _Index)
_VERSIONS: OrderedDict[tuple[str, str], _Version] = OrderedDict()
_INDEXES: OrderedDict[tuple[tuple[str, str, str], ...], _Index] = OrderedDict()
_KEPT = threading.Lock()


def forget() -> None:
    """Drop every version and index kept (a bench's cold call, a test's)."""
    with _KEPT:
        _VERSIONS.clear()
        _INDEXES.clear()


def words_of(text: str) -> list[str]:
    """The words of a text, lower-cased as the index compares them."""
    return [word.lower() for word in WORD.findall(text)]


def search(records: Sequence[Record], words: list[str], limit: int) -> tuple[list[Hit], Read]:
    """The passages of `records` holding any of the words, best first by BM25 (then in reading
    order), at most `limit`; and what was read. Every record is opened, its version proven at the
    end of the call; the index of these versions is built only if not kept (kept, each hit names
    this call's record: the same id and version, maybe admitted from another manifest)."""
    key = tuple((record.id, record.sha256, record.media) for record in records)
    with _KEPT:
        index = _INDEXES.get(key)
        if index is not None:
            _INDEXES.move_to_end(key)
    alone = False
    if index is not None:
        for record in records:
            _open(record)
    else:
        read = read_specs(records)
        index = _Index(read, build_index(read.passages), threading.Lock(), _chars(read))
        alone = not read.kept or index.chars > KEPT_CHARS
        if not alone:
            with _KEPT:
                _INDEXES[key] = index
                _drop_oldest(_INDEXES, KEPT_INDEXES)
    try:
        with index.lock:
            found = index.connection.execute(
                "select rowid, bm25(passage) from passage where passage match ?"
                " order by bm25(passage), rowid limit ?",
                (match_expression(words), limit),
            ).fetchall()
    finally:
        if alone:  # an index kept, even once dropped, is closed when no call holds it
            index.connection.close()
    passages, current = index.read.passages, {record.id: record for record in records}
    return [
        Hit(replace(passages[rowid], record=current[passages[rowid].record.id]), -score)
        for rowid, score in found
    ], index.read


def read_specs(records: Iterable[Record]) -> Read:
    """Every record's passages, in order: a PDF's pages, a Markdown spec's sections; each version
    read once in this process (then kept), each record opened on every call."""
    passages: list[Passage] = []
    unknowns: list[str] = []
    every_kept = True
    for record in records:
        version, kept = _version(record)
        every_kept = every_kept and kept
        passages.extend(
            Passage(record, piece.place, piece.page, piece.lines) for piece in version.pieces
        )
        if version.unreadable is not None:
            unknowns.append(f"{record.id}: {version.unreadable}; its text not searched")
        if version.blank:
            shown = ", ".join(map(str, version.blank[:10])) + (
                "…" if len(version.blank) > 10 else ""
            )
            unknowns.append(f"{record.id} pages {shown}: no text layer (scanned?); not searched")
    return Read(passages, unknowns, every_kept)


def build_index(passages: list[Passage]) -> sqlite3.Connection:
    """An in-memory FTS5 table of the passages, each row's id its place in `passages`."""
    import sqlite3  # start-up cost: only where a search runs

    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.execute(f"create virtual table passage using fts5(body, tokenize={_TOKENIZER!r})")
    connection.executemany(
        "insert into passage(rowid, body) values (?, ?)",
        ((rowid, _body(rowid, passage)) for rowid, passage in enumerate(passages)),
    )
    return connection


def _body(rowid: int, passage: Passage) -> str:
    if rowid % TIME_CHECK_EVERY == 0:
        check_time()
    return "\n".join(text for _, text in passage.lines)


def _chars(read: Read) -> int:
    return sum(len(text) for passage in read.passages for _, text in passage.lines)


def _open(record: Record) -> None:
    """The record opened, not read: the session proves its version at the call's end."""
    with open_record(record):
        pass


def _version(record: Record) -> tuple[_Version, bool]:
    """What the record's version holds, and whether it is kept: read, unless kept already."""
    key = (record.sha256, record.media)
    with _KEPT:
        version = _VERSIONS.get(key)
        if version is not None:
            _VERSIONS.move_to_end(key)
    if version is not None:
        _open(record)
        return version, True
    with open_record(record) as stream:
        data = stream.read()
    version = _pdf_version(data) if record.media == "pdf" else _markdown_version(data)
    if hashlib.sha256(data).hexdigest() != record.sha256:
        return version, False  # not the admitted bytes (or decompressed ones): used once
    with _KEPT:
        _VERSIONS[key] = version
        _drop_oldest(_VERSIONS, len(_VERSIONS))
    return version, True


def _drop_oldest(kept: OrderedDict[Any, Kept], most: int) -> None:
    """Drop the oldest entries until at most `most` are left, holding at most `KEPT_CHARS`."""
    total = sum(value.chars for value in kept.values())
    while kept and (len(kept) > most or total > KEPT_CHARS):
        _, dropped = kept.popitem(last=False)
        total -= dropped.chars


def _markdown_version(data: bytes) -> _Version:
    return _Version(tuple(_sections(data)))


def _sections(data: bytes) -> Iterator[_Piece]:
    """The text under each heading, and that before the first one if it holds any; trailing blank
    lines left out."""
    place = "before the first heading"
    lines: list[tuple[int, str]] = []
    for number, raw, heading in marked_lines(without_bom(iter_lines(io.BytesIO(data)))):
        if heading is not None:
            yield from _piece(place, lines)
            place, lines = f"section {heading.text!r}", []
        lines.append((number, raw.decode("utf-8", "replace")))
    yield from _piece(place, lines)


def _piece(place: str, lines: list[tuple[int, str]]) -> Iterator[_Piece]:
    while lines and not lines[-1][1].strip():
        lines.pop()
    if lines:
        yield _Piece(place, None, tuple(lines))


def _pdf_version(data: bytes) -> _Version:
    try:
        pages = page_texts(data, 1, MAX_PAGES)
    except UnreadablePdf as exc:
        return _Version((), unreadable=exc.reason)
    pieces, blank = [], []
    for page, text in enumerate(pages.texts, start=1):
        lines = page_lines(text)
        if lines:
            pieces.append(_Piece(f"page {page}", page, tuple(enumerate(lines, start=1))))
        else:
            blank.append(page)
    return _Version(tuple(pieces), tuple(blank))


def match_expression(words: Iterable[str]) -> str:
    """The query as FTS5 reads it: each word a quoted string (never an operator, a column filter
    or a prefix: `NEAR`, `*`, `"` and `:` are text), any of them matching."""
    quoted = ('"' + word.replace('"', '""') + '"' for word in dict.fromkeys(words))
    return " OR ".join(quoted)
