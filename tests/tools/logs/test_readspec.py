import io
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from pydantic import ValidationError

from tests.helpers import R42_SPEC, one_record
from tools.logs import readspec
from tools.logs.readspec import ReadSpecArgs, slug
from tools.stream.lines import iter_lines


def read(r42, section: str):
    args = ReadSpecArgs(path=R42_SPEC, section=section)
    return readspec.run(args, {"path": r42.records[R42_SPEC]})


@pytest.mark.parametrize(
    "text", ["reset_release", "Reset release", "## reset_release", "RESET-RELEASE"]
)
def test_a_section_answers_to_its_heading_or_slug(r42, text):
    excerpt = read(r42, text)
    assert excerpt.lines[0].text == "## reset_release"
    assert any("RST-5" in line.text for line in excerpt.lines)


def test_a_section_runs_to_the_next_heading_of_its_level_including_subsections(r42):
    texts = [line.text for line in read(r42, "reset_release").lines]
    assert "### Timing notes" in texts
    assert not any(text.startswith("## clock_enable") for text in texts)
    assert texts[-1] != ""


def test_line_numbers_are_those_of_the_file(r42):
    lines = Path(r42.records[R42_SPEC].path).read_text().splitlines()
    excerpt = read(r42, "reset_release")
    for line in excerpt.lines:
        assert lines[line.number - 1] == line.text


def test_an_unknown_section_lists_the_sections(r42):
    excerpt = read(r42, "power_domains")
    assert not excerpt.lines
    assert "reset-release" in excerpt.summary


def test_headings_inside_code_fences_are_not_sections(tmp_path):
    record = one_record(tmp_path, "s.md", "spec", "# T\n\n## a\n```\n## b\n```\ntext\n## c\n")
    excerpt = readspec.run(ReadSpecArgs(path="r", section="a"), {"path": record})
    assert [line.text for line in excerpt.lines] == ["## a", "```", "## b", "```", "text"]
    assert not readspec.run(ReadSpecArgs(path="r", section="b"), {"path": record}).lines


def test_a_long_section_is_cut_and_says_so(tmp_path):
    body = "\n".join(f"line {n}" for n in range(500))
    record = one_record(tmp_path, "s.md", "spec", f"## big\n{body}\n## next\n")
    excerpt = readspec.run(ReadSpecArgs(path="r", section="big"), {"path": record})
    assert excerpt.truncated
    assert len(excerpt.lines) == readspec.MAX_SECTION_LINES


def test_slug():
    assert slug("Reset release") == slug("reset_release") == "reset-release"


@pytest.mark.parametrize("section", ["", " ", "a\nb", "x" * 201, 3])
def test_section_argument_is_strict(section):
    with pytest.raises(ValidationError):
        ReadSpecArgs.model_validate({"path": R42_SPEC, "section": section})


def section_texts(tmp_path, content: str | bytes, section: str) -> list[str]:
    record = one_record(tmp_path, "s.md", "spec", content)
    excerpt = readspec.run(ReadSpecArgs(path="r", section=section), {"path": record})
    return [line.text for line in excerpt.lines]


def test_a_bom_does_not_hide_the_first_heading(tmp_path):
    record = one_record(tmp_path, "s.md", "spec", b"\xef\xbb\xbf# Title\ntext\n## a\nx\n")
    excerpt = readspec.run(ReadSpecArgs(path="r", section="title"), {"path": record})
    assert [(line.number, line.text) for line in excerpt.lines[:2]] == [(1, "# Title"), (2, "text")]


@pytest.mark.parametrize(
    "fenced",
    ["````\n```\n## b\n```\n````", "```\n~~~\n## b\n~~~\n```", "~~~~\n~~~\n## b\n~~~~"],
)
def test_only_a_matching_fence_closes_a_fence(tmp_path, fenced):
    texts = section_texts(tmp_path, f"## a\n{fenced}\ntext\n## c\n", "a")
    assert texts == ["## a", *fenced.splitlines(), "text"]


def test_an_unclosed_fence_runs_to_the_end(tmp_path):
    assert section_texts(tmp_path, "## a\n```\n## b\n", "a") == ["## a", "```", "## b"]


def test_atx_headings_may_be_indented_up_to_three_spaces(tmp_path):
    content = "## a\nx\n   ## b\ny\n    ## not a heading\n"
    assert section_texts(tmp_path, content, "a") == ["## a", "x"]
    assert section_texts(tmp_path, content, "b") == ["   ## b", "y", "    ## not a heading"]
    assert section_texts(tmp_path, content, "not a heading") == []


@pytest.mark.parametrize(("underline", "level"), [("=====", 1), ("-----", 2)])
def test_setext_headings_end_a_section(tmp_path, underline, level):
    content = f"# top\n## a\nx\n\nNext part\n{underline}\nbody\n## b\nmore\n"
    assert section_texts(tmp_path, content, "a") == ["## a", "x"]
    after = ["## b", "more"] if level == 1 else []
    assert section_texts(tmp_path, content, "next-part") == ["Next part", underline, "body", *after]


def test_a_setext_heading_may_span_lines(tmp_path):
    content = "## a\nx\n\nfirst line\nsecond line\n---\nbody\n"
    assert section_texts(tmp_path, content, "a") == ["## a", "x"]
    assert section_texts(tmp_path, content, "first line second line")[:3] == [
        "first line",
        "second line",
        "---",
    ]


@pytest.mark.parametrize(
    "body",
    [
        "x\n\n---\ny",  # a thematic break after a blank line
        "- item\n---",
        "- item\n\n  more\n---",
        "> quote\n---",
        "    code\n---",
        "| a | b |\n|---|---|\n| 1 | 2 |\n---",
        "x\n\n***\ny\n___",
    ],
)
def test_dashes_that_do_not_underline_a_paragraph_are_not_headings(tmp_path, body):
    assert section_texts(tmp_path, f"## a\n{body}\n", "a") == ["## a", *body.splitlines()]


def test_repeated_headings_are_addressed_as_github_does(tmp_path):
    content = "## Reset release\none\n## Reset release\ntwo\n## reset_release\nthree\n"
    record = one_record(tmp_path, "s.md", "spec", content)
    first = readspec.run(ReadSpecArgs(path="r", section="Reset release"), {"path": record})
    assert [line.text for line in first.lines] == ["## Reset release", "one"]
    assert "3 sections share" in first.summary
    assert "reset-release-1" in first.summary and "reset-release-2" in first.summary
    assert section_texts(tmp_path, content, "reset-release-1") == ["## Reset release", "two"]
    assert section_texts(tmp_path, content, "reset-release-2") == ["## reset_release", "three"]


def test_a_suffixed_or_unique_heading_says_nothing_of_namesakes(tmp_path):
    record = one_record(tmp_path, "s.md", "spec", "## a\none\n## a\ntwo\n## b\nthree\n")
    for section in ("a-1", "b"):
        excerpt = readspec.run(ReadSpecArgs(path="r", section=section), {"path": record})
        assert "share" not in excerpt.summary


def test_github_skips_a_suffix_a_heading_already_has(tmp_path):
    content = "## a\none\n## a-1\ntwo\n## a\nthree\n"
    assert section_texts(tmp_path, content, "a-1") == ["## a-1", "two"]
    assert section_texts(tmp_path, content, "a-2") == ["## a", "three"]


def test_an_unknown_section_lists_repeated_headings_by_their_suffix(tmp_path):
    record = one_record(tmp_path, "s.md", "spec", "## a\n## a\n")
    excerpt = readspec.run(ReadSpecArgs(path="r", section="zzz"), {"path": record})
    assert excerpt.summary.endswith("sections: a, a-1")


def test_closing_hashes_are_not_part_of_the_heading(tmp_path):
    content = "## a ##\none\n## C#\ntwo\n"
    assert section_texts(tmp_path, content, "a") == ["## a ##", "one"]
    record = one_record(tmp_path, "s.md", "spec", content)
    excerpt = readspec.run(ReadSpecArgs(path="r", section="C#"), {"path": record})
    assert excerpt.summary.startswith("section 'C#'")


def test_many_namesakes_are_counted_no_further_than_needed(tmp_path):
    text = "## a\nfirst\n" + "## a\nx\n" * 200_000
    record = one_record(tmp_path, "s.md", "spec", text)
    excerpt = readspec.run(ReadSpecArgs(path="r", section="a"), {"path": record})
    assert excerpt.summary.endswith("'a-19', 'a-20'…")
    assert "more than 21 sections share this heading" in excerpt.summary


@pytest.mark.parametrize("section", ["!!!", "#", "***"])
def test_a_section_name_without_letters_or_digits_finds_nothing(tmp_path, section):
    record = one_record(tmp_path, "s.md", "spec", "## ***\nx\n##\ny\n")
    excerpt = readspec.run(ReadSpecArgs(path="r", section=section), {"path": record})
    assert not excerpt.lines and "needs a letter or digit" in excerpt.summary


# Headings as CommonMark finds them, held to markdown-it-py's block parser (the reference).

_BLOCK_PARSER = MarkdownIt("commonmark").disable("inline")
_FRAGMENTS = [
    "# Top",
    "## Reset release",
    "### clk_en ###",
    "####### seven",
    "#nospace",
    "text",
    "more text",
    "",
    "===",
    "---",
    "--- ",
    " ===",
    "- item",
    "* item",
    "+ plus",
    "1. one",
    "2. two",
    "1) x",
    "  - nested",
    "> quote",
    "```",
    "~~~",
    "```py",
    "    code",
    "\tcode",
    "    # not heading",
    "***",
    "_ _ _",
    "Title\n===",
    "<div>",
    "</div>",
    "<!-- ## a comment -->",
    "<!--",
    "-->",
    "<pre>",
    "</pre>",
    "<span>",
    "<?php",
    "?>",
]
"""Lines of the block kinds that decide where a heading is; a GFM table's end, and a list
item's content past a nested heading's lazy lines, are not modelled (a table ends at a blank line
here; markdown-it also ends it at an indented line)."""


def _headings_by_reference(text: str) -> dict[int, tuple[int, str]]:
    """Line → (level, text) of each heading outside any container, as markdown-it-py finds it."""
    tokens = _BLOCK_PARSER.parse(text)
    return {
        token.map[0] + 1: (
            int(token.tag[1]),
            " ".join(line.strip() for line in tokens[i + 1].content.split("\n")),
        )
        for i, token in enumerate(tokens)
        if token.type == "heading_open" and token.map and token.level == 0
    }


def _headings(text: str) -> dict[int, tuple[int, str]]:
    stream = io.BufferedReader(io.BytesIO(text.encode()))
    return {n: (h.level, h.text) for n, _, h in readspec.marked_lines(iter_lines(stream)) if h}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=25))
@example(["- item", "> quote", "    # not heading", "Title\n==="])  # a quote ends the list
def test_headings_are_where_a_commonmark_parser_finds_them(lines):
    text = "\n".join(lines) + "\n"
    if text.startswith(("---\n", "--- \n")) and re.search(r"^(---|\.\.\.) ?$", text[4:], re.M):
        return  # YAML front matter, which CommonMark does not know (tested on its own)
    assert _headings(text) == _headings_by_reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "<div>\n# inside an HTML block\n",
        "<!--\n# inside a comment\n-->\n",
        "- item\n  # in a list item\n",
        "```\n# in code\n```\n",
    ],
)
def test_no_section_starts_inside_html_a_comment_a_list_item_or_code(text):
    assert _headings(text) == {} == _headings_by_reference(text)


GITHUB_HEADINGS = "# Spec\n\n## Set Don't Use\ndont\n\n## I/O timing\nio\n\n## reset_release\nrr\n"


@pytest.mark.parametrize(
    ("section", "body"),
    [
        ("set-dont-use", "dont"),  # GitHub's anchor: the apostrophe dropped
        ("set-don-t-use", "dont"),  # the slug as before
        ("Set Don't Use", "dont"),  # the heading's text
        ("io-timing", "io"),
        ("i-o-timing", "io"),
        ("reset_release", "rr"),  # GitHub keeps the underscore
        ("reset-release", "rr"),
    ],
)
def test_a_section_answers_to_githubs_own_anchor(tmp_path, section, body):
    assert section_texts(tmp_path, GITHUB_HEADINGS, section)[1] == body


def test_a_repeated_heading_answers_to_githubs_numbered_anchor(tmp_path):
    content = "## Don't\none\n## Don't\ntwo\n"
    assert section_texts(tmp_path, content, "dont-1") == ["## Don't", "two"]
    assert section_texts(tmp_path, content, "don-t-1") == ["## Don't", "two"]


def test_yaml_front_matter_holds_no_heading(tmp_path):
    content = "---\ntitle: Reset controller\nowner: dv\n---\n# Reset\nbody\n"
    assert section_texts(tmp_path, content, "title-reset-controller") == []
    assert section_texts(tmp_path, content, "reset") == ["# Reset", "body"]
    assert _headings(content) == {5: (1, "Reset")}


def test_an_unclosed_front_matter_opener_is_a_thematic_break(tmp_path):
    content = "---\nTitle\n===\n"
    assert _headings(content) == {2: (1, "Title")} == _headings_by_reference(content)
