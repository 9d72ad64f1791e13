"""analyze in its sandbox: answers checked against the csv module and the STA scan read directly,
and every way out of the sandbox refused or stopped with a clear error."""

import csv
import multiprocessing
import signal
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from contract.errors import RecordRefusal
from scenario.reading import reading
from tests.helpers import R42_HISTORY, one_record
from tools.analysis import analyze
from tools.analysis.query import AnalyzeArgs
from tools.analysis.sandbox import _ended, run_query
from tools.analysis.tables import table_file

ROOT = Path(__file__).resolve().parents[3]
AFTER = "lab/sta/setup_after.rpt"
CANARY = "CANARY-7d41f0"


def analysed(query, records, **tables):
    args = AnalyzeArgs(query=query, tables=tables)
    return analyze.run(args, {f"tables.{name}": records[rid] for name, rid in tables.items()})


def test_failures_per_test_match_the_csv_read_directly(r42):
    excerpt = analysed(
        "select test, count(*) as n from h where status = 'FAIL' group by test order by test",
        r42.records,
        h=R42_HISTORY,
    )
    with open(ROOT / "lab/history/regressions.csv", newline="") as raw:
        expected = Counter(row["test"] for row in csv.DictReader(raw) if row["status"] == "FAIL")
    assert excerpt.computed["columns"] == ["test", "n"]
    assert excerpt.computed["rows"] == [[test, count] for test, count in sorted(expected.items())]
    assert excerpt.summary.startswith("analysis, not a source fact: ")
    assert excerpt.lines[0].text == "test | n"


def test_an_sta_report_is_a_table_of_its_paths(sta1):
    excerpt = analysed(
        "select count(*), min(slack), count(*) filter (where status = 'VIOLATED') from p",
        sta1.records,
        p=AFTER,
    )
    text = (ROOT / "lab/sta/setup_after.rpt").read_text()
    slacks = [
        float(line.split()[0])
        for line in text.splitlines()
        if line.strip().endswith(("(MET)", "(VIOLATED)")) and "slack" in line
    ]
    violated = sum(1 for line in text.splitlines() if line.strip().endswith("(VIOLATED)"))
    assert excerpt.computed["rows"] == [[text.count("Startpoint: "), min(slacks), violated]]


def test_a_long_result_keeps_its_first_rows_and_counts_the_rest(tmp_path):
    rows = "".join(f"R{n},2026-01-01,t{n},PASS\n" for n in range(500))
    record = one_record(tmp_path, "h.csv", "history", "run,date,test,status\n" + rows)
    excerpt = analyze.run(
        AnalyzeArgs(query="select run from h", tables={"h": record.id}), {"tables.h": record}
    )
    assert excerpt.computed["total"] == 500 and len(excerpt.computed["rows"]) == 200
    assert excerpt.truncated and "(the first 200 shown)" in excerpt.summary


def sandboxed(query, records, **tables):
    """`query` run by the sandbox itself, past the guard's check: what the boundary does with a
    query the guard would refuse."""
    with tempfile.TemporaryDirectory() as folder:
        files = [table_file(name, records[rid], Path(folder)) for name, rid in tables.items()]
        return run_query(query, files)


@pytest.mark.parametrize(
    "query",
    [
        f"select * from '{ROOT}/lab/history/regressions.csv'",
        "select * from 'lab/history/regressions.csv'",
        "select * from 'https://example.com/x.csv'",
        "select * from read_text('/etc/passwd')",
    ],
)
def test_the_sandbox_refuses_a_file_whatever_the_text(r42, query):
    with pytest.raises(RecordRefusal) as refused:
        sandboxed(query, r42.records, h=R42_HISTORY)
    assert refused.value.code == "invalid_argument"
    assert refused.value.detail.startswith("the sandbox refused it: Permission Error")


@pytest.mark.parametrize(
    "query",
    [
        "select * from '.tmp/x.csv'",
        "select * from read_text('.tmp/*')",
        "select * from glob('.tmp/*')",
        "select * from read_blob('{cwd}/.tmp/x.csv')",
    ],
)
def test_duckdbs_default_temp_directory_is_not_readable(r42, tmp_path, monkeypatch, query):
    """DuckDB allows its temp directory (`<cwd>/.tmp` by default) with external access off: the
    sandbox's is a private folder of the call, so the process's `.tmp` is a path like any other."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "x.csv").write_text(f"secret\n{CANARY}\n")
    try:
        result = sandboxed(query.format(cwd=tmp_path), r42.records, h=R42_HISTORY)
    except RecordRefusal as refused:
        assert CANARY not in refused.detail and refused.code == "invalid_argument"
    else:
        raise AssertionError(f"the sandbox read {result.rows!r}")


def test_the_escape_through_the_temp_directory_is_refused_by_the_guard(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "x.csv").write_text(f"secret\n{CANARY}\n")
    with pytest.raises(ValidationError) as refused:
        AnalyzeArgs(query="select * from '.tmp/x.csv'", tables={"h": R42_HISTORY})
    assert "'.tmp/x.csv'" in str(refused.value) and CANARY not in str(refused.value)


@pytest.mark.parametrize("tables", [{"H": R42_HISTORY}, {"1h": R42_HISTORY}, {'h"; drop': "x"}, {}])
def test_table_names_are_plain_identifiers(tables):
    with pytest.raises(ValidationError):
        AnalyzeArgs(query="select 1", tables=tables)


def refusal_of(query: str, r42, seconds: float) -> RecordRefusal:
    """The refusal of `query` over R42's history, read within `seconds`."""
    with pytest.raises(RecordRefusal) as refused, reading(seconds):
        analysed(query, r42.records, h=R42_HISTORY)
    return refused.value


def test_a_cross_join_past_the_time_limit_is_stopped(r42):
    """18⁸ rows of the granted table joined with itself: the query's process is killed at the
    call's time limit, `tool_timeout`."""
    cut = refusal_of("select count(*) from h a, h b, h c, h d, h e, h f, h g, h i", r42, 1.0)
    assert cut.code == "tool_timeout"


def test_a_query_past_duckdbs_buffer_limit_is_refused(r42):
    refused = refusal_of(
        "select list(repeat(a.test, 1000)) from h a, h b, h c, h d, h e", r42, 60.0
    )
    assert refused.code == "invalid_argument"
    assert "memory limit" in refused.detail


def test_an_allocation_outside_duckdbs_buffers_is_bounded_by_the_process(r42):
    """`damerau_levenshtein` of two 12,000-character strings allocates its ~1.1 GB matrix outside
    DuckDB's buffer manager (`memory_limit` does not see it): the query's process has an address
    space limit, the call fails with a clear error, and this process goes on to the next call."""
    refused = refusal_of(
        "select damerau_levenshtein(repeat('a', 12000), repeat('b', 12000)) from h limit 1",
        r42,
        60.0,
    )
    assert refused.code == "invalid_argument"
    assert "memory limit" in refused.detail
    with reading(60.0):
        after = analysed("select count(*) from h", r42.records, h=R42_HISTORY)
    assert after.computed["rows"] == [[18]]


def test_a_query_process_ended_without_an_answer_is_a_clear_error():
    ended = _ended(-signal.SIGKILL)
    assert ended.code == "invalid_argument"
    assert ended.detail.startswith("the query's process was ended by SIGKILL before it answered")
    assert "memory limit is 256MB of DuckDB buffers" in ended.detail


def test_no_query_process_outlives_its_call(r42):
    refusal_of(
        "select count(*) from h a, h b, h c, h d, h e, h f, h g, h i, h j", r42, 0.5
    )  # 18⁹ rows: past the limit however fast the machine
    assert multiprocessing.active_children() == []
