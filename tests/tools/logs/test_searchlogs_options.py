"""searchlogs' options: regular expressions (against Python's re, line by line), context lines
(against grep -C computed apart), after_line, and patterns refused before anything runs."""

import io
import re
import subprocess
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.helpers import one_record
from tools.logs import searchlogs
from tools.logs.logscan import Search, Sizes, search
from tools.logs.searchlogs import SearchLogsArgs
from tools.stream.patterns import Pattern

SMALL = Sizes(chunk=5, reserve=40)


def found_lines(data: bytes, args: SearchLogsArgs, sizes: Sizes = SMALL) -> list[tuple[int, str]]:
    found = search(
        io.BytesIO(data),
        Search(args.pattern, args.limit, args.count, args.after_line, args.context),
        sizes,
    )
    return [(number, found.lines[number].text) for number in sorted(found.lines)]


def lines_of(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


REGEXES = ["a+b", "^ab", "b$", "^a.b$", "(?i)AB", "[ab]{3}", "a|ba", "^(a|b)+$", r"a\sb", r"b\x0aa"]


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(
        st.sampled_from([b"a", b"b", b"A", b"ab", b" ", b"\n", b"\r\n", b"\xff"]), max_size=30
    ).map(b"".join),
    pattern=st.sampled_from(REGEXES),
    sizes=st.sampled_from([SMALL, Sizes(chunk=1, reserve=8), Sizes()]),
)
def test_a_regex_matches_the_lines_python_re_matches_one_by_one(data, pattern, sizes):
    args = SearchLogsArgs(path="r", query=pattern, regex=True, limit=200)
    compiled = re.compile(pattern.encode(), re.MULTILINE)
    expected = [number for number, line in enumerate(lines_of(data), 1) if compiled.search(line)]
    found = search(io.BytesIO(data), Search(args.pattern, 200), sizes)
    assert found.hits == expected and found.matching == len(expected)


def test_a_match_across_a_newline_is_no_line_s_match():
    data = b"xa\nb\nab\na b\n"
    args = SearchLogsArgs(path="r", query=r"a\sb", regex=True)
    assert found_lines(data, args) == [(4, "a b")]


def test_a_hostile_regex_runs_in_linear_time():
    """Python's re takes over a second on one such line of 30 characters, and twice as long per
    character more; these are megabytes: a backtracking (or any super-linear) engine would not
    answer in the 60 s given, a linear one answers in milliseconds."""
    data = (b"a" * 3_000_000 + b"!\n") * 2 + b"a" * 3_000_000 + b"\n" + b"a" * 1000 + b"!\n"
    answers: list[Any] = []
    searching = threading.Thread(
        target=lambda: answers.append(
            search(io.BytesIO(data), Search(Pattern("(a+)+$", regex=True), 5))
        ),
        name="hostile-regex",
        daemon=True,
    )
    searching.start()
    searching.join(timeout=60)
    assert answers, "no answer in 60 s"
    [found] = answers
    assert found.hits == [3] and found.long_lines == 3


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "Back-references are unsupported"),
        ("(?=a)b", "Zero-width assertions are not supported"),
        ("a*", "it can match an empty string"),
        ("^", "it can match an empty string"),
        ("$", "it can match an empty string"),
        (r"\b", "it can match an empty string"),
        ("x|$", "it can match an empty string"),
        ("[", "Unterminated character class"),
    ],
)
def test_a_pattern_it_cannot_run_is_refused_naming_why(pattern, reason):
    with pytest.raises(ValidationError) as caught:
        SearchLogsArgs(path="r", query=pattern, regex=True)
    assert reason in str(caught.value)
    SearchLogsArgs(path="r", query=pattern)  # as a fixed string it is fine


def grep_context(data: bytes, needle: bytes, limit: int, context: int) -> list[int]:
    """The line numbers `grep -F -m limit -C context -n` prints, computed apart."""
    lines = lines_of(data)
    hits = [n for n, line in enumerate(lines, 1) if needle in line][:limit]
    shown = {n for hit in hits for n in range(hit - context, hit + context + 1)}
    return sorted(n for n in shown if 1 <= n <= len(lines))


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"x", b"y", b"xy", b"\n", b"\n\n", b"yyyyy"]), max_size=40).map(
        b"".join
    ),
    limit=st.integers(1, 4),
    context=st.integers(0, 3),
)
def test_context_shows_the_lines_grep_c_shows(data, limit, context):
    args = SearchLogsArgs(path="r", query="x", limit=limit, context=context)
    shown = found_lines(data, args)
    assert [number for number, _ in shown] == grep_context(data, b"x", limit, context)
    lines = lines_of(data)
    assert all(text == lines[number - 1].decode() for number, text in shown)


def test_context_agrees_with_grep_itself(tmp_path):
    log = tmp_path / "a.log"
    log.write_bytes(
        b"".join(b"%d %s\n" % (n, b"UVM_ERROR" if n % 40 == 0 else b"ok") for n in range(1, 400))
    )
    grep = subprocess.run(
        ["grep", "-n", "-F", "-m", "3", "-C", "2", "UVM_ERROR", str(log)],
        capture_output=True,
        check=True,
    )
    expected = [
        int(re.match(rb"(\d+)[:-]", line)[1]) for line in grep.stdout.splitlines() if line != b"--"
    ]
    record = one_record(tmp_path, "b.log", "log", log.read_bytes())
    excerpt = searchlogs.run(
        SearchLogsArgs(path="r", query="UVM_ERROR", limit=3, context=2), {"path": record}
    )
    assert [line.number for line in excerpt.lines] == expected
    assert excerpt.summary.startswith("9 line(s) contain 'UVM_ERROR' (counted to the end")


def test_after_line_continues_past_the_hits_already_seen(tmp_path):
    data = b"".join(b"%d %s\n" % (n, b"hit" if n % 10 == 0 else b"miss") for n in range(1, 101))
    record = one_record(tmp_path, "a.log", "log", data)
    first = searchlogs.run(SearchLogsArgs(path="r", query="hit", limit=3), {"path": record})
    assert [line.number for line in first.lines] == [10, 20, 30]
    rest = searchlogs.run(
        SearchLogsArgs(path="r", query="hit", limit=3, after_line=30), {"path": record}
    )
    assert [line.number for line in rest.lines] == [40, 50, 60]
    assert (
        rest.summary
        == "7 line(s) after line 30 contain 'hit' (counted to the end of the log); the first 3 are shown"
    )
    for sizes in (SMALL, Sizes(chunk=1, reserve=8)):
        found = search(io.BytesIO(data), Search(Pattern("hit"), 3, after_line=35), sizes)
        assert found.hits == [40, 50, 60] and found.matching == 7


def test_a_long_line_with_a_hit_is_counted_once_and_said(tmp_path):
    data = b"short hit\n" + b"hit " * 600_000 + b"\nlast hit\n"  # longer than a chunk
    record = one_record(tmp_path, "a.log", "log", data)
    excerpt = searchlogs.run(SearchLogsArgs(path="r", query="hit"), {"path": record})
    assert [line.number for line in excerpt.lines] == [1, 2, 3]
    assert excerpt.summary == "3 line(s) contain 'hit' (counted to the end of the log)"


@pytest.mark.parametrize("sizes", [Sizes(chunk=512, reserve=1024), Sizes()])
def test_a_long_context_line_says_what_it_leaves_out_wherever_it_was_read(sizes):
    data = b"y" * 1000 + b"\nhit\n" + b"z" * 700 + b"\n"
    found = search(io.BytesIO(data), Search(Pattern("hit"), 1, context=1), sizes)
    texts = {number: line.text for number, line in found.lines.items()}
    assert texts == {1: "y" * 360 + " … [+640 bytes]", 2: "hit", 3: "z" * 360 + " … [+340 bytes]"}
