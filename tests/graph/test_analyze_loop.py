"""analyze under the guard: its tables are approved records looked up by id, what is not one
SELECT is refused before it runs, and its receipt is shown as computed."""

import json

from graph.present.render import handover_markdown
from tests.helpers import R42_HISTORY, call, run_embedded, stop

AFTER = "lab/sta/setup_after.rpt"
FAILS = "select test, count(*) as fails from h where status = 'FAIL' group by test"


def test_a_computed_figure_is_receipted_with_its_query_and_its_inputs(action_file):
    chooser = action_file(
        [
            call("a1", "analyze", query=FAILS, tables={"h": R42_HISTORY}),
            stop("read", hypotheses=[{"statement": "reset_smoke failed 4 times", "refs": ["E1"]}]),
        ]
    )
    state = run_embedded("R42", chooser)
    (item,) = state["evidence"]
    assert item["tool"] == "analyze" and item["computed"]["query"] == FAILS
    assert item["computed"]["rows"] == [["reset_smoke", 4]]
    assert [source["record"] for source in item["sources"]] == [R42_HISTORY]
    assert item["sources"][0]["sha256"] == state["grant"]["records"][R42_HISTORY]["sha256"]
    text = handover_markdown(state["handover"])
    assert f"Computed, not stated by any source, by the query: `{FAILS}`" in text
    assert "analysis, not a source fact: 1 row(s)" in text


def test_tables_the_run_was_not_granted_and_escapes_are_refused(action_file):
    chooser = action_file(
        [
            call("b1", "analyze", query="select 1", tables={"s": "lab/protected/secrets.csv"}),
            call("b2", "analyze", query="select 1", tables={"l": "lab/runs/R42/reset_smoke.log"}),
            call("b3", "analyze", query="COPY h TO '/tmp/x.csv'", tables={"h": R42_HISTORY}),
            call(
                "b4",
                "analyze",
                query="select * from read_csv('/etc/passwd')",
                tables={"h": R42_HISTORY},
            ),
            call("b5", "analyze", query="ATTACH '/tmp/x.db'", tables={"h": R42_HISTORY}),
            call("b6", "analyze", query="INSTALL httpfs", tables={"h": R42_HISTORY}),
            stop(),
        ]
    )
    state = run_embedded("R42", chooser)
    refusals = [(r["code"], r["owner"], r["detail"]) for r in state["refusals"]]
    assert [code for code, _, _ in refusals] == [
        "unapproved_record",
        "invalid_argument",
        "invalid_argument",
        "invalid_argument",
        "invalid_argument",
        "invalid_argument",
    ]
    assert {owner for _, owner, _ in refusals} == {"tool:analyze"}
    assert "reads history or sta_report" in refusals[1][2]
    assert "COPY given" in refusals[2][2] and "read_csv() is not allowed" in refusals[3][2]
    assert state["evidence"] == []


def test_an_sta_comparison_in_one_query(action_file):
    query = (
        "select a.endpoint, b.slack as before, a.slack as after from a join b using (endpoint)"
        " where a.slack < b.slack order by a.slack - b.slack limit 3"
    )
    tables = {"a": AFTER, "b": "lab/sta/setup_before.rpt"}
    chooser = action_file([call("s1", "analyze", query=query, tables=tables), stop()])
    state = run_embedded("STA1", chooser)
    (item,) = state["evidence"]
    assert item["error"] is None and item["computed"]["columns"] == ["endpoint", "before", "after"]
    assert {source["record"] for source in item["sources"]} == set(tables.values())
    assert all(row[2] < row[1] for row in item["computed"]["rows"])


CANARY = "CANARY-51be9c"


def test_reading_duckdbs_temp_directory_is_refused_by_the_guard(action_file, tmp_path, monkeypatch):
    """`<cwd>/.tmp` is where DuckDB keeps its temp files, and it lets a connection read there with
    external access off: a string table, a quoted file function or a method call reaching it is
    refused by the guard, before any call runs, naming the reference; the canary is nowhere."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "x.csv").write_text(f"secret\n{CANARY}\n")
    queries = [
        "select * from '.tmp/x.csv'",
        'select * from h, ".tmp/x.csv"',
        "select \"read_text\"('.tmp/x.csv')",
        "select * from \"READ_CSV\"('.tmp/x.csv')",
        "select '.tmp/x.csv'.read_text()",
        "with h as (select * from read_blob('.tmp/x.csv')) select * from h",
    ]
    script = [
        call(f"t{number}", "analyze", query=query, tables={"h": R42_HISTORY})
        for number, query in enumerate(queries)
    ]
    state = run_embedded("R42", action_file([*script, stop()]))
    refusals = [(r["code"], r["owner"], r["detail"]) for r in state["refusals"]]
    assert [(code, owner) for code, owner, _ in refusals] == [
        ("invalid_argument", "tool:analyze")
    ] * len(queries)
    named = [
        "'.tmp/x.csv'",
        "'.tmp/x.csv'",
        "read_text()",
        "read_csv()",
        "read_text()",
        "read_blob()",
    ]
    assert all(name in detail for name, (_, _, detail) in zip(named, refusals, strict=True))
    assert all("\n" not in detail for _, _, detail in refusals)
    assert state["evidence"] == []
    assert CANARY not in json.dumps(state, default=str)


def test_a_call_past_its_memory_fails_on_its_receipt_and_the_run_goes_on(action_file):
    """An allocation outside DuckDB's buffer manager (~1.1 GB for two 12,000-character strings)
    is stopped by the address-space limit of the query's process: the call fails on its receipt
    with a clear error, and the next call of the same run computes."""
    huge = "select damerau_levenshtein(repeat('a', 12000), repeat('b', 12000)) as d from h limit 1"
    chooser = action_file(
        [
            call("big1", "analyze", query=huge, tables={"h": R42_HISTORY}),
            call("big2", "analyze", query=FAILS, tables={"h": R42_HISTORY}),
            stop("read", hypotheses=[{"statement": "reset_smoke failed 4 times", "refs": ["E2"]}]),
        ]
    )
    state = run_embedded("R42", chooser)
    first, second = state["evidence"]
    assert first["error"] == "invalid_argument" and first["excerpt"] == []
    assert first["summary"].startswith("could not be read: ") and "memory limit" in first["summary"]
    assert second["error"] is None and second["computed"]["rows"] == [["reset_smoke", 4]]
    assert state["handover"]["status"] == "stopped"
