"""The STA profile on the same graph, guard and handover."""

from lab.stagen import PathSpec, render_path
from tests.helpers import call, run_embedded, stop

BEFORE, AFTER = "lab/sta/setup_before.rpt", "lab/sta/setup_after.rpt"


def test_the_scripted_sta_baseline():
    state = run_embedded("STA1")
    assert [(item["ref"], item["tool"]) for item in state["evidence"]] == [
        ("E1", "stasummary"),
        ("E2", "stasummary"),
        ("E3", "stadiff"),
        ("E4", "stapath"),
    ]
    assert state["evidence"][2]["excerpt"][0]["text"].startswith(
        "[after] flipped MET→VIOLATED: u_core_clk/dst_reg[0]"
    )
    assert {source["record"] for source in state["evidence"][2]["sources"]} == {BEFORE, AFTER}
    assert state["status"] == "stopped"
    assert any(
        "no hold reports are approved" in unknown for unknown in state["handover"]["unknowns"]
    )


def test_out_of_scope_sta_requests_are_refused(action_file):
    chooser = action_file(
        [
            call("a", "stasummary", report="lab/sta/hold_after.rpt"),
            call("b", "stasummary", report="lab/runs/R42/reset_smoke.log"),
            call("c", "stadiff", before=BEFORE, after="../protected/design.txt"),
            call("d", "searchlogs", path=AFTER, query="slack"),
            call("e", "run_sta", script="report_checks -path_delay min"),
            call("f", "stapaths", report=AFTER, limit=True),
            stop(),
        ]
    )
    state = run_embedded("STA1", chooser)
    assert [(r["code"], r["owner"]) for r in state["refusals"]] == [
        ("unapproved_record", "tool:stasummary"),
        ("unapproved_record", "tool:stasummary"),
        ("unapproved_record", "tool:stadiff"),
        ("unknown_tool", "guard"),
        ("unknown_tool", "guard"),
        ("invalid_argument", "tool:stapaths"),
    ]
    assert state["evidence"] == []


def test_a_figure_no_arithmetic_keeps_fails_that_call_and_the_run_goes_on(tmp_path, action_file):
    """A slack of 1e999 (infinity once read): the summary's call fails, saying so; the next call
    reads the other report; the run ends normally."""
    clock = "rising edge-triggered flip-flop clocked by clk"
    path = render_path(PathSpec("a/q", "b/d", clock, clock, "clk", "max", 2.0, 9.95, pin="D"))
    assert "7.95   slack (MET)" in path
    (tmp_path / "bad.rpt").write_text(
        path.replace("7.95   slack (MET)", "-1e999   slack (VIOLATED)")
    )
    (tmp_path / "good.rpt").write_text(path)
    (tmp_path / "sta.toml").write_text(
        'id = "INF"\nprofile = "sta"\ngoal = "Is timing worse?"\n'
        "budget = { steps = 4, evidence = 4 }\n"
        '[[record]]\nid = "bad"\nkind = "sta_report"\npath = "bad.rpt"\n'
        '[[record]]\nid = "good"\nkind = "sta_report"\npath = "good.rpt"\n'
    )
    chooser = action_file(
        [call("a", "stasummary", report="bad"), call("b", "stasummary", report="good"), stop("x")]
    )
    state = run_embedded(str(tmp_path / "sta.toml"), chooser)
    assert state["status"] == "stopped"
    failed, read = state["evidence"]
    assert failed["error"] == "unreadable_figure" and "OverflowError" in failed["summary"]
    assert read["error"] is None
