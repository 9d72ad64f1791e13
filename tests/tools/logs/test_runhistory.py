import csv
import io

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from contract.errors import ManifestError
from tests.helpers import R42_HISTORY, one_record
from tools.logs import runhistory
from tools.logs.runhistory import RunHistoryArgs


def history(r42, test: str, limit: int = 10):
    return runhistory.run(
        RunHistoryArgs(path=R42_HISTORY, test=test, limit=limit), {"path": r42.records[R42_HISTORY]}
    )


def test_rows_of_one_test_with_the_header_as_line_one(r42):
    excerpt = history(r42, "reset_smoke")
    assert excerpt.lines[0].number == 1
    rows = [line.text for line in excerpt.lines[1:]]
    assert len(rows) == 8 and all(",reset_smoke," in row for row in rows)
    assert rows[0].startswith("R35") and rows[-1].startswith("R42,2026-11-27,reset_smoke,FAIL")
    assert "FAIL 4, PASS 4" in excerpt.summary
    assert not excerpt.truncated


def test_the_limit_keeps_the_most_recent_rows(r42):
    excerpt = history(r42, "reset_smoke", limit=2)
    assert [line.text[:3] for line in excerpt.lines[1:]] == ["R41", "R42"]
    assert excerpt.truncated


def test_an_unknown_test_has_no_rows(r42):
    excerpt = history(r42, "nonexistent")
    assert "no rows" in excerpt.summary and len(excerpt.lines) == 1


def test_quoted_cells_and_extra_columns_are_kept(tmp_path):
    record = one_record(
        tmp_path,
        "h.csv",
        "history",
        'Run,Date,Test,Status,Signature\nR1,2026-01-01,t,FAIL,"a, b"\n',
    )
    excerpt = runhistory.run(RunHistoryArgs(path="r", test="t"), {"path": record})
    assert excerpt.lines[1].text == 'R1,2026-01-01,t,FAIL,"a, b"'
    assert "FAIL 1" in excerpt.summary


@pytest.mark.parametrize("limit", [True, 0, 101, 1.5, "3"])
def test_limit_is_strict(limit):
    with pytest.raises(ValidationError):
        RunHistoryArgs.model_validate({"path": R42_HISTORY, "test": "t", "limit": limit})


def rows(tmp_path, content: str | bytes, test: str = "t", limit: int = 10):
    record = one_record(tmp_path, "h.csv", "history", content)
    return runhistory.run(RunHistoryArgs(path="r", test=test, limit=limit), {"path": record})


def test_a_bom_before_the_header_is_ignored(tmp_path):
    excerpt = rows(tmp_path, b"\xef\xbb\xbftest,status,run,date\nt,FAIL,R1,2026-01-01\n")
    assert excerpt.lines[0].number == 1 and excerpt.lines[0].text == "test,status,run,date"
    assert "FAIL 1" in excerpt.summary


def test_a_row_spanning_lines_is_shown_whole_with_its_line_numbers(tmp_path):
    content = (
        'status,test,signature,run,date\nPASS,t1,"a\nb\nc",R1,2026-01-01\nFAIL,t1,x,R2,2026-01-02\n'
    )
    excerpt = rows(tmp_path, content, "t1")
    assert [(line.number, line.text) for line in excerpt.lines] == list(
        enumerate(content.splitlines(), 1)
    )
    assert "FAIL 1, PASS 1" in excerpt.summary


def test_the_limit_counts_rows_not_lines(tmp_path):
    content = 'run,date,test,status,sig\nR1,d,t,FAIL,"a\nb"\nR2,d,t,PASS,"c\nd"\n'
    excerpt = rows(tmp_path, content, limit=1)
    assert [line.number for line in excerpt.lines] == [1, 4, 5]
    assert excerpt.truncated


@pytest.mark.parametrize(
    ("row", "lines"),
    [
        ('R1,d,t,FAIL,5" disk', 1),  # a quote inside an unquoted cell is text
        ('R1,d,t,FAIL,"x"y"', 1),  # after a closing quote, text to the comma
        ('R1,d,t,FAIL,"a""\nb"', 2),  # a doubled quote keeps the cell open
        ('R1,d,t,FAIL,"a\n""b"""', 2),
    ],
)
def test_quotes_open_a_row_only_as_csv_reads_them(tmp_path, row, lines):
    excerpt = rows(tmp_path, f"run,date,test,status,sig\n{row}\nR2,d,t,PASS,\n")
    assert [line.number for line in excerpt.lines] == list(range(1, lines + 3))
    assert "FAIL 1, PASS 1" in excerpt.summary


def test_a_quote_left_open_ends_its_row_after_max_row_lines(tmp_path):
    filler = "\n".join(f"filler {n}" for n in range(runhistory.MAX_ROW_LINES + 5))
    excerpt = rows(
        tmp_path, f'run,date,test,status,sig\nR1,d,t,FAIL,"oops\n{filler}\nR2,d,t,PASS,\n'
    )
    assert "FAIL 1, PASS 1" in excerpt.summary
    assert len(excerpt.lines) == 1 + runhistory.MAX_ROW_LINES + 1
    assert excerpt.lines[-1].text == "R2,d,t,PASS,"


def test_a_cell_longer_than_a_kept_line_does_not_swallow_the_next_rows(tmp_path):
    later = [f"R{n},d,t,FAIL,s" for n in range(2, 12)]
    text = (
        "run,date,test,status,sig\n"
        + 'R1,d,t,FAIL,"'
        + "x" * 70_000
        + '"\n'
        + "\n".join(later)
        + "\n"
    )
    excerpt = rows(tmp_path, text, test="t", limit=100)
    assert excerpt.summary.startswith("t: 11 row(s)")


def test_a_bare_carriage_return_in_a_cell_is_read_not_a_crash(tmp_path):
    excerpt = rows(tmp_path, "run,date,test,status\nR1,d,t,FA\rIL\nR2,d,t,PASS\n", test="t")
    assert excerpt.summary.startswith("t: 2 row(s)")


def test_a_row_left_open_at_max_row_lines_says_so(tmp_path):
    later = "".join(f"R{n},d,t,FAIL,s\n" for n in range(2, 60))
    excerpt = rows(tmp_path, 'run,date,test,status,sig\nR1,d,t,FAIL,"assert at top.v:12\n' + later)
    assert (
        excerpt.truncated
        and "1 row(s) ended after 50 lines with a quote still open" in excerpt.summary
    )


# Rows as Python's csv module reads them (the reference), short of the bounds it lacks.

_CELLS = st.sampled_from(
    [
        "a",
        "reset_smoke",
        "",
        '"q"',
        '"a,b"',
        '"a;b"',
        '"a\tb"',
        "x,y",
        "x;y",
        '"x""y"',
        '"two\nlines"',
        '"\n"',
        'b"c',
        '"p"q',
        '"""',
        '"',
    ]
)


def _csv_rows(text: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """Each row's last line number and its cells (line breaks dropped, as `_cells` drops them),
    as `csv.reader` reads the text."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    return [(reader.line_num, [cell.replace("\n", "").strip() for cell in row]) for row in reader]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_CELLS, min_size=1, max_size=4), min_size=1, max_size=8),
    st.sampled_from([",", ";", "\t"]),
)
def test_rows_and_cells_are_those_the_csv_module_reads(rows, delimiter):
    text = "\n".join(delimiter.join(row) for row in rows) + "\n"
    lines = list(enumerate(text.encode().split(b"\n")[:-1], 1))
    grouped = list(runhistory._rows(lines, delimiter))
    assume(all(len(row) < runhistory.MAX_ROW_LINES for row in grouped))
    cells = [(row[-1][0], runhistory._cells(row, delimiter)) for row in grouped]
    assert cells == _csv_rows(text, delimiter)


@pytest.mark.parametrize(
    ("delimiter", "name"), [(";", "semicolon.csv"), ("\t", "history.tsv"), (",", "comma.csv")]
)
def test_semicolon_and_tab_separated_histories_are_read(tmp_path, delimiter, name):
    rows = [
        ["run", "date", "test", "status", "note"],
        ["R1", "2026-11-01", "reset_smoke", "PASS", "a, b"],
        ["R2", "2026-11-02", "reset_smoke", "FAIL", '"x; y"'],
        ["R2", "2026-11-02", "fifo_basic", "PASS", "-"],
    ]
    content = "\n".join(delimiter.join(row) for row in rows) + "\n"
    record = one_record(tmp_path, name, "history", content)
    excerpt = runhistory.run(RunHistoryArgs(path="r", test="reset_smoke"), {"path": record})
    assert excerpt.summary.startswith("reset_smoke: 2 row(s) (FAIL 1, PASS 1)")
    assert [line.number for line in excerpt.lines] == [1, 2, 3]


def test_a_metrics_file_without_the_history_columns_is_refused_with_what_it_lacks(tmp_path):
    with pytest.raises(ManifestError, match="lacks column\\(s\\) run, test, status"):
        one_record(tmp_path, "metrics.tsv", "history", "date\twns\ttns\n2026-11-01\t-0.1\t-2\n")
