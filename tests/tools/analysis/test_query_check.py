"""The guard's check of an `analyze` query, decided on DuckDB's own parse tree: one SELECT whose
every table is a granted name (or a CTE it defines), no table function anywhere, and only the
pure functions of the allowlist, however a name is quoted or cased."""

import duckdb
import pytest
from pydantic import ValidationError

from contract.text import describe_validation_error
from tests.helpers import R42_HISTORY
from tools.analysis.functions import ALLOWED_FUNCTIONS, BINDER_FUNCTIONS
from tools.analysis.query import AnalyzeArgs

STA_TABLES = {"a": "lab/sta/setup_after.rpt", "b": "lab/sta/setup_before.rpt"}


def refusal(query: str, **fields: object) -> str:
    """The guard's one-line detail for `query` over table h (or `fields`)."""
    with pytest.raises(ValidationError) as refused:
        AnalyzeArgs.model_validate({"query": query, "tables": {"h": R42_HISTORY}} | fields)
    detail = describe_validation_error(refused.value)
    assert "\n" not in detail
    return detail


@pytest.mark.parametrize(
    ("query", "names"),
    [
        # A string or a quoted name as a table: a path, whatever DuckDB would let it reach.
        ("select * from '.tmp/x.csv'", "'.tmp/x.csv'"),
        ('select * from ".tmp/x.csv"', "'.tmp/x.csv'"),
        ("select * from '/etc/passwd'", "'/etc/passwd'"),
        ("from 'https://example.com/x.csv'", "'https://example.com/x.csv'"),
        ("select * from h join '.tmp/x.csv' using (test)", "'.tmp/x.csv'"),
        ("select * from h_csv", "'h_csv'"),  # a name the call did not grant
        ("select * from verdicts", "'verdicts'"),  # no family given
        ("select * from main.h", "'main.h'"),
        ("select * from memory.main.h", "'memory.main.h'"),
        ('select * from "main"."h"', "'main.h'"),
        ("select * from h at (version => 1)", "h AT"),
        # A table function, bare, quoted or cased, anywhere in the statement.
        ("select * from read_csv('/etc/passwd')", "read_csv() is not allowed"),
        ("select * from \"read_csv\"('/etc/passwd')", "read_csv() is not allowed"),
        ("select * from \"READ_CSV\"('/etc/passwd')", "read_csv() is not allowed"),
        ("select * from READ_TEXT ('/etc/passwd')", "read_text() is not allowed"),
        ("select * from glob('/etc/*')", "glob() is not allowed"),
        ("select * from range(10)", "range() is not allowed"),
        ("select * from h, unnest([1, 2])", "unnest() is not allowed"),
        ("select * from query('select 1')", "query() is not allowed"),
        ("select * from main.read_blob('/etc/passwd')", "main.read_blob() is not allowed"),
        (
            "select * from h where test in (select content from read_text('/etc/passwd'))",
            "read_text() is not allowed",
        ),
        ("with h as (select * from read_blob('/etc/passwd')) select * from h", "read_blob()"),
        ("select * from (select * from read_parquet('x.parquet'))", "read_parquet()"),
        # A file function, a setting or a variable called as a scalar, however written.
        ("select \"read_text\"('.tmp/x.csv')", "read_text() is not allowed"),
        ("select \"Read_Text\"('.tmp/x.csv')", "read_text() is not allowed"),
        ("select '.tmp/x.csv'.read_text()", "read_text() is not allowed"),
        ('select "main"."read_text"(\'x\')', "main.read_text() is not allowed"),
        ("select current_setting('temp_directory')", "current_setting() is not allowed"),
        ("select getvariable('x')", "getvariable() is not allowed"),
        ("select test from h where random() < 0.5", "random() is not allowed"),
        ("select list_aggregate([1, 2], 'sum')", "list_aggregate() is not allowed"),
        ("select count(*) over (), json_serialize_plan('select 1')", "json_serialize_plan()"),
        ("select test, read_csv(test) over () from h", "read_csv() is not allowed"),
        # Shapes that bind or read more than the tables: refused by kind.
        ("select * from h pivot (count(*) for status in ('PASS'))", "PIVOT is not allowed"),
        ("pivot h on status using count(*)", "a SELECT only"),
        ("summarize h", "SHOW_REF is not allowed"),
        ("describe h", "SHOW_REF is not allowed"),
        ("show tables", "SHOW_REF is not allowed"),
        ("select $1", "a parameter is not allowed"),
        # A CTE's name is a plain identifier and is seen only within its statement.
        ('with "/etc/passwd" as (select 1) select * from "/etc/passwd"', "'/etc/passwd'"),
        ("select * from (with x as (select 1) select * from x), x", "'x'"),
        # Statements that are not one SELECT.
        ("COPY h TO '/tmp/out.csv'", "a SELECT only (COPY given)"),
        ("INSTALL httpfs", "a SELECT only (LOAD given)"),
        ("LOAD httpfs", "a SELECT only (LOAD given)"),
        ("ATTACH '/tmp/x.db' AS x", "a SELECT only (ATTACH given)"),
        ("SET enable_external_access = true", "a SELECT only (SET given)"),
        ("SET temp_directory = '/'", "a SELECT only (SET given)"),
        ("PRAGMA version", "a SELECT only (PRAGMA given)"),
        ("CALL pragma_version()", "a SELECT only (CALL given)"),
        ("EXPORT DATABASE '/tmp/x'", "a SELECT only (EXPORT given)"),
        ("select 1; select 2", "one statement only (2 given)"),
        ("selec 1", "not SQL DuckDB can parse"),
    ],
)
def test_a_query_reaching_past_its_tables_is_refused_naming_what_it_reaches(query, names):
    detail = refusal(query)
    assert detail.startswith("query: ") and names in detail


@pytest.mark.parametrize(
    ("query", "tables", "family"),
    [
        ("select test, count(*) as n from h where status = 'FAIL' group by test", None, None),
        (
            "with wa as (select endpoint, min(slack) as s from a group by endpoint),"
            " wb as (select endpoint, min(slack) as s from b group by endpoint)"
            " select endpoint, wb.s as before, wa.s as after, round(wa.s - wb.s, 3) as delta"
            " from wa join wb using (endpoint) order by delta",
            STA_TABLES,
            None,
        ),
        (
            "select a.endpoint, b.slack as before, a.slack as after from a join b using"
            " (endpoint) where a.slack < b.slack order by a.slack - b.slack limit 3",
            STA_TABLES,
            None,
        ),
        (
            "select endpoint, slack, rank() over (partition by corner order by slack) as r,"
            " lag(slack) over w, avg(slack) over (w rows between 2 preceding and current row)"
            " from a window w as (order by line) qualify r <= 3",
            STA_TABLES,
            None,
        ),
        (
            "select corner, count(*) filter (where status = 'VIOLATED'), median(slack),"
            " quantile_cont(slack, 0.9), percentile_cont(0.5) within group (order by slack),"
            " string_agg(endpoint, ',' order by slack), histogram(path_group), list(slack)[1:3]"
            " from a group by all having count(*) > 0 order by 1",
            STA_TABLES,
            None,
        ),
        (
            "with recursive r(n) as (select 1 union all select n + 1 from r where n < 3),"
            " h as (select * from h where status = 'FAIL')"  # a CTE shadowing its table
            " select n, (select count(*) from h) from r union all select 0, count(*) from h",
            None,
            None,
        ),
        (
            "from h select split_part(test, '_', 1) as block, regexp_extract(test, '[a-z]+'),"
            " strftime(cast(date as date), '%Y-%m'), date_trunc('month', cast(date as date)),"
            " case when status like 'F%' then 1 else 0 end, coalesce(test, ''), test ilike '%x%',"
            " [x * 2 for x in [1, 2]], list_transform([1], lambda x: x + 1), {'k': 1}.k,"
            " exists (select 1 from h), test in (select test from h), * exclude (run)",
            None,
            None,
        ),
        ("select * from (values (1, 'a'), (2, 'b')) v(n, s) cross join h", None, None),
        (
            "select distinct on (test) test, status from h order by test desc nulls last, run asc"
            " nulls first, seed limit 5 offset 1",
            None,
            None,
        ),
        (
            "select test from h union select test from h except select run from h intersect all"
            " select test from h union all by name select test from h order by all desc",
            None,
            None,
        ),
        (
            "select test, status, count(*) from h group by grouping sets ((test), (status), ())"
            " union all select test, null, count(*) from h group by rollup (test)",
            None,
            None,
        ),
        (
            "select h.test, t.n from h semi join h h2 using (test) anti join h h3 on false,"
            " lateral (select h.seed as n) t left join h h4 on h4.run = h.run using sample 10 rows",
            None,
            None,
        ),
        (
            "select test, row_number() over (order by seed desc rows between unbounded preceding"
            " and unbounded following exclude current row), list(run order by seed desc) over ()"
            " from h where seed > any (select seed from h)",
            None,
            None,
        ),
        (
            "select split_part(member, '/', 2) as nightly, signature, count(*) from verdicts"
            " where status = 'fail' group by all",
            {},
            "runs/*/*.log",
        ),
        (
            "select damerau_levenshtein(repeat('a', 12000), repeat('b', 12000)), "
            "levenshtein(test, 'x'), jaro_winkler_similarity(test, 'x') from h",
            None,
            None,
        ),
    ],
)
def test_granted_tables_joins_ctes_windows_and_aggregates_pass(query, tables, family):
    fields = {"query": query, "tables": {"h": R42_HISTORY} if tables is None else tables}
    args = AnalyzeArgs.model_validate(fields | ({"family": family} if family else {}))
    assert args.query == query


def test_every_allowed_function_is_a_function_of_expressions_in_duckdb():
    """The allowlist names scalars, aggregates, windows and macros DuckDB has (a name it lacks
    would be a name no one checked); never a function that reads files or the engine's state."""
    connection = duckdb.connect(":memory:")
    kinds: dict[str, set[str]] = {}
    for name, kind in connection.execute(
        "select function_name, function_type from duckdb_functions()"
    ).fetchall():
        kinds.setdefault(name.lower(), set()).add(kind)
    expression_kinds = {"scalar", "aggregate", "window", "macro"}
    missing = sorted(
        name
        for name in ALLOWED_FUNCTIONS - BINDER_FUNCTIONS
        if not kinds.get(name, set()) & expression_kinds
    )
    assert missing == []
    reaching = [
        name
        for name in ALLOWED_FUNCTIONS
        if name.startswith(("read_", "parquet_", "duckdb_", "pragma_", "current_", "json_serial"))
        or name.endswith("_scan")
        or name in {"glob", "query", "query_table", "getvariable", "random", "now", "version"}
    ]
    assert reaching == []
