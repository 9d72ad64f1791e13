"""readlines: a range of a log's lines, numbered as in the file, the range read said exactly."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from lab import LAB_DIR
from ledger.context import WarrantContext
from nodes.choosers import ScriptedChooser
from tests.helpers import R42_LOG, one_record, run_embedded
from tools.catalog import tools_of
from tools.logs import readlines
from tools.logs.readlines import ReadLinesArgs


def read(record, start: int, count: int = 50):
    return readlines.run(ReadLinesArgs(path="r", start=start, count=count), {"path": record})


_LINE = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30
)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_LINE, max_size=40), start=st.integers(1, 50), count=st.integers(1, 20))
def test_the_range_is_the_files_own_lines(tmp_path_factory, lines, start, count):
    content = "".join(f"{line}\n" for line in lines)
    record = one_record(tmp_path_factory.mktemp("log"), "run.log", "log", content)
    excerpt = read(record, start, count)
    expected = list(enumerate(lines, 1))[start - 1 : start - 1 + count]  # computed apart
    assert [line.number for line in excerpt.lines] == [number for number, _ in expected]
    for line, (_, text) in zip(excerpt.lines, expected, strict=True):
        assert line.text == text or line.text.startswith(text[:100])
    if expected:
        last = expected[-1][0]
        assert excerpt.summary.startswith(f"lines {start}–{last}")
        assert ("the log ends at line" in excerpt.summary) == (last < start + count - 1)
    else:
        assert excerpt.summary == f"nothing at line {start}: the log has {len(lines)} line(s)"


def test_a_gzip_log_reads_the_same_range(tmp_path):
    content = "".join(f"line {n}\n" for n in range(1, 1001))
    record = one_record(tmp_path, "run.log.gz", "log", gzip.compress(content.encode()))
    excerpt = read(record, 998, 10)
    assert [line.text for line in excerpt.lines] == ["line 998", "line 999", "line 1000"]
    assert excerpt.summary == "lines 998–1000 (the log ends at line 1000; 7 asked for past it)"


@pytest.mark.parametrize(
    "args",
    [
        {"path": "r", "start": 0},
        {"path": "r", "start": True},
        {"path": "r", "start": "5"},
        {"path": "r", "start": 1, "count": 201},
        {"path": "r", "start": 1, "count": 0},
        {"path": "r", "start": 1, "extra": 1},
    ],
)
def test_arguments_are_strict(args):
    with pytest.raises(ValidationError):
        ReadLinesArgs.model_validate(args)


def test_it_is_a_triage_tool_for_logs_only():
    spec = tools_of("triage")["readlines"]
    assert spec.record_kind == "log" and spec.record_fields == ("path",)
    assert "readlines" not in tools_of("sta")


def test_a_chooser_reads_around_a_hit_and_the_receipt_keeps_the_range():
    """Through the guard and the executor: search, then read the lines around the first hit."""
    search = {"path": R42_LOG, "query": "UVM_ERROR", "limit": 1}
    around = {"path": R42_LOG, "start": 1, "count": 3}
    script = [
        {"summary": "find", "tool_calls": [{"id": "c1", "name": "searchlogs", "args": search}]},
        {"summary": "around", "tool_calls": [{"id": "c2", "name": "readlines", "args": around}]},
        {"summary": "stop", "message": {"kind": "stop", "text": "done"}},
    ]
    context = WarrantContext(choosers={"read": ScriptedChooser(script)})
    state = run_embedded("R42", "read", context=context)
    read = state["evidence"][1]
    assert read["tool"] == "readlines" and read["args"] == {"path": R42_LOG, "start": 1, "count": 3}
    assert [line["line"] for line in read["excerpt"]] == [1, 2, 3]
    assert read["summary"] == "lines 1–3"
    log_lines = (LAB_DIR.parent / R42_LOG).read_text().splitlines()[:3]  # computed apart
    assert [line["text"] for line in read["excerpt"]] == log_lines
