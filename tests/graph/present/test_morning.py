"""The morning report's renderings (graph/present/morning.py) against the report they render:
every section's rows and cells, parsed back apart (a Markdown parser, an HTML parser, the text's
table lines), hostile cells kept as data, and no terminal line wider than asked."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest
from markdown_it import MarkdownIt
from rich.cells import cell_len

from graph.present.anchors import line_anchors
from graph.present.morning import morning_html, morning_markdown, morning_text
from tests.graph.present.morning_sample import sample_report

REPORT = sample_report(60, seed=3)
BARE = sample_report(30, seed=5, history=False)
SLUG = str.maketrans({"/": "-", ".": "-", "_": "-"})


def shown(text: str) -> str:
    """A raw cell as a person must see it: line breaks and escapes written out, nothing else
    changed (the reference, apart from the renderer's own escaping)."""
    return text.replace("\n", "\\n").replace("\x1b", "\\x1b")


def anchor(member: str, line: int) -> str:
    return f"e1-{member.lower().translate(SLUG)}-l{line}"


def expected(report: dict[str, Any]) -> dict[str, list[list[tuple[str, str | None]]]]:
    """Each section's rows as (text, link) cells, read off the report."""
    known = {
        "known": lambda b: (
            f"known since {b['first_seen']['run']} ({b['first_seen']['date']},"
            f" history line {b['first_seen']['line']})"
        ),
        "new": lambda b: "new",
        None: lambda b: "unknown (no history)",
    }
    buckets = [
        [
            (b["id"], None),
            (str(b["count"]), None),
            (shown(b["signature"]), None),
            (known[b["status"]](b), None),
            (
                f"{b['example']['member']}:{b['example']['line']}",
                anchor(b["example"]["member"], b["example"]["line"]),
            ),
        ]
        for b in report["buckets"]
    ]
    failing = [
        [
            (t["test"], None),
            (t["member"], None),
            (t["bucket"], None),
            (
                shown(f"L{t['first_error']['line']} {t['first_error']['text']}"),
                anchor(t["member"], t["first_error"]["line"]),
            ),
            ("new failure" if t["new"] else t["history"] or "no history", None),
            ("flaky" if t["flaky"] else "", None),
        ]
        for t in report["tests"]
        if t["status"] == "fail"
    ]
    silent = [
        [(r["member"], None), (r["test"], None), (r["why"], None)] for r in report["no_verdict"]
    ]
    unread = [[(r["member"], None), (r["why"], None)] for r in report["not_read"]]
    return {
        "Buckets": buckets,
        "Failing tests": failing,
        "No verdict": silent,
        "Not read": unread,
    }


def markdown_tables(text: str) -> dict[str, list[list[tuple[str, str | None]]]]:
    """Each `####` section's table body, as (text, link) cells, parsed by markdown-it (GFM
    tables)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables: dict[str, list[list[tuple[str, str | None]]]] = {}
    title, row, in_body = "", None, False
    for at, token in enumerate(tokens):
        if token.type == "heading_open":
            title = tokens[at + 1].content.rsplit(" (", 1)[0]
            tables[title] = []
        elif token.type == "tbody_open":
            in_body = True
        elif token.type == "tbody_close":
            in_body = False
        elif token.type == "tr_open" and in_body:
            row = []
            tables[title].append(row)
        elif token.type == "inline" and in_body and row is not None:
            children = token.children or []
            assert not any(child.type == "html_inline" for child in children)
            links = [child.attrs["href"] for child in children if child.type == "link_open"]
            assert len(links) <= 1
            text = "".join(child.content for child in children if child.type == "text")
            row.append((text, links[0].removeprefix("#") if links else None))
    return tables


class Tables(HTMLParser):
    """The fragment's tables, by the `<h3>` before each, as (text, link) cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, str | None]]]] = {}
        self.title, self.where, self.cell, self.href = "", "", "", None
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "h3":
            self.where, self.title = "h3", ""
        elif tag == "tbody":
            self.where = "body"
        elif tag == "tr" and self.where == "body":
            self.tables[self.title].append([])
        elif tag == "td":
            self.cell, self.href = "", None
        elif tag == "a" and self.where == "body":
            self.href = dict(attrs)["href"].removeprefix("#")

    def handle_endtag(self, tag):
        if tag == "h3":
            self.title = self.title.rsplit(" (", 1)[0]
            self.tables[self.title] = []
            self.where = ""
        elif tag == "td":
            self.tables[self.title][-1].append((self.cell, self.href))
        elif tag == "tbody":
            self.where = ""

    def handle_data(self, data):
        if self.where == "h3":
            self.title += data
        elif self.where == "body":
            self.cell += data


@pytest.mark.parametrize("report", [REPORT, BARE], ids=["history", "no-history"])
def test_the_markdown_tables_parse_to_every_row_and_cell(report):
    assert markdown_tables(morning_markdown(report)) == expected(report)


@pytest.mark.parametrize("report", [REPORT, BARE], ids=["history", "no-history"])
def test_the_html_tables_hold_every_row_and_cell_escaped(report):
    parser = Tables()
    parser.feed(morning_html(report))
    assert parser.tables == expected(report)
    assert set(parser.tags) <= {
        "section",
        "p",
        "h3",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "a",
    }


@pytest.mark.parametrize("width", range(40, 201))
def test_no_terminal_line_is_wider_than_asked(width):
    text = morning_text(REPORT, width)
    assert "\x1b" not in text
    assert max(cell_len(line) for line in text.splitlines()) <= width


def test_the_terminal_tables_have_a_row_per_failing_test_in_order():
    text = morning_text(REPORT, 200)
    want = [row[0][0] for row in expected(REPORT)["Failing tests"]]
    section = text.split("Failing tests (")[1].split("No verdict (")[0]
    rows = [line for line in section.splitlines() if line.startswith("│ ")][1:]
    assert [row.split("│")[1].strip() for row in rows] == want
    assert "[AXI_SCB]" in text and "\\n" in text  # brackets kept; a line break written out


def test_a_count_the_report_does_not_hold_is_unknown_never_zero():
    for shown_text in (morning_text(BARE), morning_markdown(BARE), morning_html(BARE)):
        text = " ".join(shown_text.split())  # the terminal's line wrapped
        assert "new failures unknown (no history)" in text
        assert "0 new failure" not in text
    news = sum(
        1 for row in REPORT["tests"] if row["status"] == "fail" and "F" not in row["history"][:-1]
    )
    assert f"· {news} new failure(s)" in morning_text(REPORT, 200)


def test_a_link_opens_the_anchor_the_handover_gives_the_line():
    example = REPORT["buckets"][0]["example"]
    item = {
        "ref": "E1",
        "family": {"name": "runs/N7/*.log"},
        "excerpt": [
            {"line": example["line"], "text": f"B1 {example['member']}:{example['line']}: x"}
        ],
    }
    assert line_anchors(item) == [anchor(example["member"], example["line"])]
    assert f"](#{line_anchors(item)[0]})" in morning_markdown(REPORT)


def test_empty_sections_say_so_and_a_narrow_width_is_refused():
    empty = {"summary": {}, "buckets": [], "tests": [], "no_verdict": [], "not_read": []}
    text = morning_text(empty)
    assert "No test failed." in text and "Every member was read." in text
    assert "unknown members" in text
    with pytest.raises(ValueError, match="at least 40 columns"):
        morning_text(REPORT, 39)
