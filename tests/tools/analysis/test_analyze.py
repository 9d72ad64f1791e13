"""analyze in its sandbox: answers checked against the csv module and the STA scan read directly,
and every way out of the sandbox refused or stopped with a clear error."""

import csv
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.helpers import R42_HISTORY, one_record
from tools.analysis import analyze
from tools.analysis.query import AnalyzeArgs
from tools.errors import RecordRefusal
from tools.records.reading import reading

ROOT = Path(__file__).resolve().parents[3]
AFTER = "lab/sta/setup_after.rpt"


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


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("select * from read_csv('/etc/passwd')", "read_csv() is not allowed"),
        ("select * from READ_TEXT ('/etc/passwd')", "READ_TEXT() is not allowed"),
        ("select * from glob('/etc/*')", "glob() is not allowed"),
        ("COPY h TO '/tmp/out.csv'", "a SELECT only (COPY given)"),
        ("INSTALL httpfs", "a SELECT only (LOAD given)"),
        ("LOAD httpfs", "a SELECT only (LOAD given)"),
        ("ATTACH '/tmp/x.db' AS x", "a SELECT only (ATTACH given)"),
        ("SET enable_external_access = true", "a SELECT only (SET given)"),
        ("select 1; select 2", "one statement only (2 given)"),
        ("selec 1", "not SQL DuckDB can parse"),
    ],
)
def test_what_is_not_one_select_over_its_tables_is_refused_before_it_runs(query, says):
    with pytest.raises(ValidationError, match=__import__("re").escape(says)):
        AnalyzeArgs(query=query, tables={"h": R42_HISTORY})


@pytest.mark.parametrize(
    "query",
    [
        # A path or a URL as a table: the sandbox, not the parser, refuses it.
        f"select * from '{ROOT}/lab/history/regressions.csv'",
        "select * from 'lab/history/regressions.csv'",
        "select * from 'https://example.com/x.csv'",
    ],
)
def test_the_sandbox_refuses_a_file_whatever_the_text(r42, query):
    with pytest.raises(RecordRefusal) as refused:
        analysed(query, r42.records, h=R42_HISTORY)
    assert refused.value.code == "invalid_argument"
    assert refused.value.detail.startswith("the sandbox refused it: Permission Error")


def test_a_cross_join_of_a_billion_rows_is_stopped_at_the_time_limit(r42):
    with pytest.raises(RecordRefusal) as cut, reading(1.0):
        analysed(
            "select count(*) from range(1000000000) a, range(1000000000) b",
            r42.records,
            h=R42_HISTORY,
        )
    assert cut.value.code == "tool_timeout"


def test_a_query_past_the_memory_limit_is_refused(r42):
    with pytest.raises(RecordRefusal) as refused, reading(60.0):
        analysed("select list(repeat('x', 1000)) from range(2000000)", r42.records, h=R42_HISTORY)
    assert "memory limit (256MB)" in refused.value.detail


@pytest.mark.parametrize("tables", [{"H": R42_HISTORY}, {"1h": R42_HISTORY}, {'h"; drop': "x"}, {}])
def test_table_names_are_plain_identifiers(tables):
    with pytest.raises(ValidationError):
        AnalyzeArgs(query="select 1", tables=tables)
