from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.helpers import R42_SPEC, one_record
from tools import readspec
from tools.readspec import ReadSpecArgs, slug


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
