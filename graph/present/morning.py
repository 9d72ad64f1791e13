"""The morning report: a nightly's triage as tables a person reads at a glance, rendered from the
triage receipt's `triage` report (`docs/nightly.md`), so that every cell is evidence the receipt
holds and nothing is a cause.

One layout, three renderings, each a pure function of the report: `morning_text` (the terminal,
within a width), `morning_markdown` (GFM tables, fit for `$GITHUB_STEP_SUMMARY`) and `morning_html`
(a fragment for the handover page and the web run page). Sections, in order: one line of counts;
the buckets; the failing tests, one row each; no verdict and not read, one row each with why.

Every cell is data: control characters are escaped (`render.escaped`), Markdown's inline
punctuation is backslash-escaped, HTML is entity-escaped, and the text rendering parses no markup,
so `UVM_ERROR [AXI_SCB]` stays as the log wrote it. A count the report does not hold (no history:
no new failures counted) is said unknown, never zero.

The terminal tables are laid out here rather than by rich's `Table`: rich takes about 0.6 s for
1,000 rows, and the report's budget is 50 ms (`bench/morning_render.py`); rich measures the width
of text that is not ASCII."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from markupsafe import escape
from rich.cells import cell_len, set_cell_size

from graph.present.anchors import member_anchor
from graph.present.escaping import escaped

LineLinks = Callable[[str, str, int], str]
"""(item ref, member, line) → the anchor its link opens (without `#`)."""

MIN_WIDTH = 40
"""The narrowest terminal the tables are laid out for."""

FLEX_MIN = (24, 12)
"""The widths the free-text columns give way to, in turn, before the others narrow."""

_MD_ESCAPE = {ord(char): "\\" + char for char in "\\`*_[]<>|!&~$#"}


class Cell(NamedTuple):
    text: str
    anchor: str | None = None


@dataclass(frozen=True)
class Table:
    """One section: its title, column headers, rows, and what to say when it has none."""

    title: str
    headers: tuple[str, ...]
    rows: Sequence[tuple[Cell, ...]]
    empty: str
    flex: tuple[int, ...] = ()
    """The columns that give way first, in order, when the table is too wide (free text)."""
    wrap: bool = False
    """Wrap long cells in the terminal (few rows); else clip them with `…`."""


@dataclass(frozen=True)
class Layout:
    summary: str
    tables: tuple[Table, ...]


def morning_text(report: Mapping[str, Any], width: int = 100, *, ref: str = "E1") -> str:
    """The report for a terminal: plain text (no ANSI codes), no line wider than `width`."""
    if width < MIN_WIDTH:
        raise ValueError(f"width must be at least {MIN_WIDTH} columns, not {width}")
    layout = layout_of(report, ref)
    lines = _wrapped(layout.summary, width)
    for table in layout.tables:
        lines += ["", _fit(f"{table.title} ({len(table.rows)})", width).rstrip()]
        lines += _text_table(table, width) if table.rows else _wrapped(table.empty, width)
    return "\n".join(lines) + "\n"


def morning_markdown(
    report: Mapping[str, Any], *, ref: str = "E1", links: LineLinks | None = None
) -> str:
    """The report as GFM: its line of counts, then a table per section; a line's link opens the
    handover's anchor for it (`graph/present/anchors.py`)."""
    layout = layout_of(report, ref, links)
    lines = [f"**Morning report** · {_md(layout.summary)}"]
    for table in layout.tables:
        lines += ["", f"#### {_md(table.title)} ({len(table.rows)})", ""]
        lines += _md_table(table) if table.rows else [_md(table.empty)]
    return "\n".join(lines) + "\n"


def morning_html(
    report: Mapping[str, Any], *, ref: str = "E1", links: LineLinks | None = None
) -> str:
    """The report as an HTML fragment (`<section class="morning">`), every cell escaped."""
    layout = layout_of(report, ref, links)
    parts = [f'<section class="morning"><p class="summary">{escape(layout.summary)}</p>']
    for table in layout.tables:
        parts.append(f"<h3>{escape(table.title)} ({len(table.rows)})</h3>")
        parts.append(_html_table(table) if table.rows else f"<p>{escape(table.empty)}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def layout_of(report: Mapping[str, Any], ref: str = "E1", links: LineLinks | None = None) -> Layout:
    """The report's sections as rows of cells, each cell one value of the report."""
    link = links or member_anchor
    tests = [row for row in report.get("tests") or () if row.get("status") == "fail"]
    return Layout(
        _summary(report.get("summary") or {}),
        (
            _buckets(report.get("buckets") or (), ref, link),
            _failing(tests, ref, link),
            _no_verdict(report.get("no_verdict") or ()),
            _not_read(report.get("not_read") or ()),
        ),
    )


def _summary(summary: Mapping[str, Any]) -> str:
    new = summary.get("new_failures")
    news = "new failures unknown (no history)" if new is None else f"{new} new failure(s)"
    counts = (
        f"{_count(summary, 'pass')} pass · {_count(summary, 'fail')} fail · "
        f"{_count(summary, 'no_verdict')} no verdict · {_count(summary, 'not_read')} not read"
    )
    return (
        f"{_count(summary, 'members')} members: {counts} · "
        f"{_count(summary, 'buckets')} bucket(s) · {news}"
    )


def _count(summary: Mapping[str, Any], key: str) -> str:
    value = summary.get(key)
    return "unknown" if value is None else str(value)


def _buckets(buckets: Sequence[Mapping[str, Any]], ref: str, link: LineLinks) -> Table:
    rows = []
    for bucket in buckets:
        example = bucket.get("example")
        rows.append(
            (
                Cell(str(bucket["id"])),
                Cell(str(bucket["count"])),
                Cell(escaped(str(bucket["signature"]))),
                Cell(_status(bucket.get("status"), bucket.get("first_seen"))),
                _line_cell(example, _ref_of(str(bucket["id"]), ref), link, numbered=False),
            )
        )
    headers = ("Bucket", "Count", "Signature", "Status", "First example")
    return Table("Buckets", headers, rows, "No bucket: no failure was read.", (2, 3), wrap=True)


def _status(status: str | None, first: Mapping[str, Any] | None) -> str:
    if status is None:
        return "unknown (no history)"
    if status != "known" or not first:
        return escaped(str(status))
    return escaped(
        f"known since {first.get('run')} ({first.get('date')}, history line {first.get('line')})"
    )


def _failing(tests: Sequence[Mapping[str, Any]], ref: str, link: LineLinks) -> Table:
    rows = [
        (
            Cell(escaped(str(test["test"]))),
            Cell(escaped(str(test["member"]))),
            Cell(str(test.get("bucket") or "—")),
            _line_cell(test.get("first_error"), _ref_of(str(test.get("bucket") or ""), ref), link),
            Cell(_before(test)),
            Cell("flaky" if test.get("flaky") else ""),
        )
        for test in tests
    ]
    headers = ("Test", "Member", "Bucket", "First error", "Before", "Flaky")
    return Table("Failing tests", headers, rows, "No test failed.", (3,))


def _before(test: Mapping[str, Any]) -> str:
    """`new failure` when the test never failed before; else its last statuses, today's last."""
    if test.get("new") is True:
        return "new failure"
    history = test.get("history")
    return escaped(str(history)) if history else "no history"


def _no_verdict(rows: Sequence[Mapping[str, Any]]) -> Table:
    cells = [
        (
            Cell(escaped(str(row["member"]))),
            Cell(escaped(str(row.get("test") or "—"))),
            Cell(escaped(str(row["why"]))),
        )
        for row in rows
    ]
    headers = ("Member", "Test", "Why")
    return Table("No verdict", headers, cells, "Every member read gave a verdict.", (2,), wrap=True)


def _not_read(rows: Sequence[Mapping[str, Any]]) -> Table:
    cells = [(Cell(escaped(str(row["member"]))), Cell(escaped(str(row["why"])))) for row in rows]
    return Table("Not read", ("Member", "Why"), cells, "Every member was read.", (1,), wrap=True)


def _line_cell(
    spot: Mapping[str, Any] | None, ref: str, link: LineLinks, *, numbered: bool = True
) -> Cell:
    """A member's line as a link to its anchor: `L846 text` (or `member:846`)."""
    if not spot:
        return Cell("—")
    member, line = str(spot["member"]), int(spot["line"])
    text = f"L{line} {spot.get('text', '')}" if numbered else f"{member}:{line}"
    return Cell(escaped(text), link(ref, member, line))


def _ref_of(bucket: str, ref: str) -> str:
    """The receipt a bucket id names (`E2/B1` → `E2`), else the report's own."""
    return bucket.split("/", 1)[0] if "/" in bucket else ref


def _wrapped(text: str, width: int) -> list[str]:
    return [_fit(piece, width).rstrip() for piece in _pieces(text, width)] or [""]


def _pieces(text: str, width: int) -> list[str]:
    """`text` in pieces at most `width` cells wide, broken at spaces where it can be."""
    pieces = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    if text.isascii():
        return pieces
    return [part for piece in pieces for part in _chunks(piece, width)]


def _chunks(text: str, width: int) -> list[str]:
    """`text` cut into pieces at most `width` cells wide (wide characters count two)."""
    if cell_len(text) <= width:
        return [text]
    chunks, chunk = [], ""
    for char in text:
        if chunk and cell_len(chunk + char) > width:
            chunks.append(chunk)
            chunk = ""
        chunk += char
    return [*chunks, chunk]


def _fit(text: str, width: int) -> str:
    """`text` padded or clipped (ending `…`) to exactly `width` cells."""
    if text.isascii():
        return text.ljust(width) if len(text) <= width else text[: width - 1] + "…"
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(set_cell_size(text, width - 1) + "…", width)


def _widths(table: Table, width: int) -> list[int]:
    """Each column's width: its widest cell, the widest columns narrowed until the table fits."""
    space = width - 3 * len(table.headers) - 1
    widths = [
        min(space, max(_len(header), *(_len(row[at].text) for row in table.rows)))
        for at, header in enumerate(table.headers)
    ]
    for least in FLEX_MIN:
        for flex in table.flex:
            widths[flex] -= max(0, min(sum(widths) - space, widths[flex] - least))
    while sum(widths) > space:
        widest = max(range(len(widths)), key=widths.__getitem__)
        widths[widest] -= max(1, min(sum(widths) - space, widths[widest] - _second(widths)))
    return widths


def _second(widths: list[int]) -> int:
    """The second widest width (a column is narrowed to it in one step)."""
    ordered = sorted(widths)
    return ordered[-2] if len(ordered) > 1 else 0


def _len(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _text_table(table: Table, width: int) -> list[str]:
    widths = _widths(table, width)
    rule = "─┼─".join("─" * size for size in widths)
    lines = [
        "┌─" + "─┬─".join("─" * size for size in widths) + "─┐",
        *_text_row(table.headers, widths, wrap=True),
        f"├─{rule}─┤",
    ]
    for row in table.rows:
        lines += _text_row([cell.text for cell in row], widths, wrap=table.wrap)
    lines.append("└─" + "─┴─".join("─" * size for size in widths) + "─┘")
    return lines


def _text_row(texts: Sequence[str], widths: list[int], *, wrap: bool) -> Iterator[str]:
    if not wrap:
        yield "│ " + " │ ".join(map(_fit, texts, widths)) + " │"
        return
    columns = [_pieces(text, size) for text, size in zip(texts, widths, strict=True)]
    for at in range(max(map(len, columns))):
        cells = [column[at] if at < len(column) else "" for column in columns]
        yield "│ " + " │ ".join(map(_fit, cells, widths)) + " │"


def _md(text: str) -> str:
    """Text as a Markdown table cell shows it literally: inline punctuation escaped."""
    return text.translate(_MD_ESCAPE)


def _md_table(table: Table) -> list[str]:
    align = ["---:" if header == "Count" else "---" for header in table.headers]
    lines = ["| " + " | ".join(table.headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in table.rows]
    return lines


def _md_cell(cell: Cell) -> str:
    return f"[{_md(cell.text)}](#{cell.anchor})" if cell.anchor else _md(cell.text)


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{escape(header)}</th>" for header in table.headers)
    body = "".join("<tr>" + "".join(map(_html_cell, row)) + "</tr>" for row in table.rows)
    return (
        f'<table class="morning-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def _html_cell(cell: Cell) -> str:
    if cell.anchor:
        return f'<td><a href="#{escape(cell.anchor)}">{escape(cell.text)}</a></td>'
    return f"<td>{escape(cell.text)}</td>"
