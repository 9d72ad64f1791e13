"""The passages `searchdocs` ranks, and their ranking: each approved Markdown spec's sections (its
headings found as readspec finds them, `marked_lines`) and each PDF spec's pages (`pdfpages.py`),
read through the records' hashed streams, indexed per call in an in-memory SQLite FTS5 table and
ranked by FTS5's BM25. Nothing is cached: every call reads the admitted versions again, so a
changed record is refused `record_changed` as by every tool.

A section here runs to the next heading of any level (readspec's runs to the next of its own level
or higher): a passage is the text under one heading, so a nested section is not ranked twice.
Words are what FTS5's `unicode61` tokenizer makes of the text, with `_` kept inside a word so an
identifier (`clk_en`) is one word; the query's words are matched whole, without stemming.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from scenario.reading import check_time, open_record
from scenario.registry import Record
from tools.logs.readspec import marked_lines
from tools.specs.pdfpages import UnreadablePdf, page_lines, page_texts
from tools.stream.lines import iter_lines, without_bom

WORD = re.compile(r"\w+")
"""A word as the index's tokenizer takes one (letters, digits and `_`), in the query and in a
passage's lines."""
_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_'"
MAX_PAGES = 1 << 20


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


def words_of(text: str) -> list[str]:
    """The words of a text, lower-cased as the index compares them."""
    return [word.lower() for word in WORD.findall(text)]


def read_specs(records: Iterable[Record]) -> Read:
    """Every record's passages, in order: a PDF's pages, a Markdown spec's sections."""
    passages: list[Passage] = []
    unknowns: list[str] = []
    for record in records:
        if record.media == "pdf":
            _pdf_passages(record, passages, unknowns)
        else:
            passages.extend(_sections(record))
    return Read(passages, unknowns)


def _sections(record: Record) -> Iterator[Passage]:
    """The text under each heading, and that before the first one if it holds any; trailing blank
    lines left out."""
    place = "before the first heading"
    lines: list[tuple[int, str]] = []
    with open_record(record) as stream:
        for number, raw, heading in marked_lines(without_bom(iter_lines(stream))):
            if heading is not None:
                yield from _passage(record, place, lines)
                place, lines = f"section {heading.text!r}", []
            lines.append((number, raw.decode("utf-8", "replace")))
    yield from _passage(record, place, lines)


def _passage(record: Record, place: str, lines: list[tuple[int, str]]) -> Iterator[Passage]:
    while lines and not lines[-1][1].strip():
        lines.pop()
    if lines:
        yield Passage(record, place, None, tuple(lines))


def _pdf_passages(record: Record, passages: list[Passage], unknowns: list[str]) -> None:
    with open_record(record) as stream:
        data = stream.read()
    try:
        pages = page_texts(data, 1, MAX_PAGES)
    except UnreadablePdf as exc:
        unknowns.append(f"{record.id}: {exc.reason}; its text not searched")
        return
    blank = []
    for page, text in enumerate(pages.texts, start=1):
        lines = page_lines(text)
        if not lines:
            blank.append(page)
            continue
        numbered = tuple(enumerate(lines, start=1))
        passages.append(Passage(record, f"page {page}", page, numbered))
    if blank:
        shown = ", ".join(map(str, blank[:10])) + ("…" if len(blank) > 10 else "")
        unknowns.append(f"{record.id} pages {shown}: no text layer (scanned?); not searched")


def match_expression(words: Iterable[str]) -> str:
    """The query as FTS5 reads it: each word a quoted string (never an operator, a column filter
    or a prefix: `NEAR`, `*`, `"` and `:` are text), any of them matching."""
    quoted = ('"' + word.replace('"', '""') + '"' for word in dict.fromkeys(words))
    return " OR ".join(quoted)


def ranked(passages: list[Passage], words: list[str], limit: int) -> list[Hit]:
    """The passages holding any of the words, best first by BM25 (then in reading order), at most
    `limit`."""
    import sqlite3  # start-up cost: only where a search runs

    connection = sqlite3.connect(":memory:")
    try:
        connection.execute(
            f"create virtual table passage using fts5(body, tokenize={_TOKENIZER!r})"
        )
        for rowid, passage in enumerate(passages):
            check_time()
            body = "\n".join(text for _, text in passage.lines)
            connection.execute("insert into passage(rowid, body) values (?, ?)", (rowid, body))
        found = connection.execute(
            "select rowid, bm25(passage) from passage where passage match ?"
            " order by bm25(passage), rowid limit ?",
            (match_expression(words), limit),
        ).fetchall()
    finally:
        connection.close()
    return [Hit(passages[rowid], -score) for rowid, score in found]
