import pytest
from pydantic import ValidationError

from tests.helpers import R42_HISTORY, one_record
from tools import runhistory
from tools.runhistory import RunHistoryArgs


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
