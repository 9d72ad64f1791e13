"""OpenSTA's other `report_checks` formats, read or said aloud: `-format end` tables under their
setup/hold titles, `summary` rows (slack only), `slack_only` rows, `short` paths (complete, not
truncated), and whatever no reader understands, by line. Fixtures follow OpenSTA's layout."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import one_record
from tests.tools.sta.test_stascan import fast, reference
from tools.sta import summary as sta
from tools.sta.items import EndRow, LimitRow, SlackOnlyRow, StaPath, SummaryRow, Unrecognised
from tools.sta.report import parse_text

END_TABLES = """\
max_delay/setup group core_clk

                                     Required  Actual
Endpoint                               Delay   Delay   Slack
------------------------------------------------------------
u_core/acc_reg[3]/D (DFF_X1)            2.10    2.35   -0.25 (VIOLATED)
u_core/acc_reg[2]/D (DFF_X1)            2.10    2.05    0.05 (MET)
u_core/acc_reg[3]/E (DFF_X1)            2.10    2.20   -0.10 (VIOLATED)

min_delay/hold group core_clk

                                     Required  Actual
Endpoint                               Delay   Delay   Slack
------------------------------------------------------------
u_core/acc_reg[3]/D (DFF_X1)            0.05    0.02   -0.03 (VIOLATED)

"""
SETUP_ROWS = [(-0.25, "VIOLATED"), (0.05, "MET"), (-0.10, "VIOLATED")]
SUMMARY = """\
Startpoint                           Endpoint                               Slack
--------------------------------------------------------------------------------
u_core/ctl_reg/Q (DFF_X1)            u_core/acc_reg[3]/D (DFF_X1)           -0.25
in_valid (input)                     u_core/acc_reg[2]/D (DFF_X1)            0.05

"""
SLACK_ONLY = """\
Group                                  Slack
--------------------------------------------
core_clk                               -0.25
io_clk                                  1.50

"""
SHORT = """\
Startpoint: u_core/ctl_reg (rising edge-triggered flip-flop clocked by core_clk)
Endpoint: u_core/acc_reg[3] (rising edge-triggered flip-flop clocked by core_clk)
Path Group: core_clk
Path Type: max

"""


def summary(tmp_path: Path, text: str):
    record = one_record(tmp_path, "r.rpt", "sta_report", text)
    return sta.stasummary(sta.ReportArgs(report="r"), {"report": record})


def test_end_tables_keep_their_setup_or_hold_title_and_two_pins_stay_two_endpoints():
    rows = [item for item in parse_text(END_TABLES) if isinstance(item, EndRow)]
    assert [(row.endpoint, row.slack, row.status) for row in rows[:3]] == [
        ("u_core/acc_reg[3]/D (DFF_X1)", -0.25, "VIOLATED"),
        ("u_core/acc_reg[2]/D (DFF_X1)", 0.05, "MET"),
        ("u_core/acc_reg[3]/E (DFF_X1)", -0.10, "VIOLATED"),
    ]
    assert {row.check for row in rows[:3]} == {"max_delay/setup group core_clk"}
    assert rows[3].check == "min_delay/hold group core_clk" and rows[3].slack == -0.03


def test_the_summary_shows_a_hold_table_apart_from_the_setup_one(tmp_path):
    lines = [line.text for line in summary(tmp_path, END_TABLES).lines]
    tns = sum(min(slack, 0.0) for slack, _ in SETUP_ROWS)  # computed apart
    violating = sum(status == "VIOLATED" for _, status in SETUP_ROWS)
    assert lines[0].startswith(
        f"end table max_delay/setup group core_clk: 3 row(s), {violating} violating, worst slack "
        f"-0.25 at u_core/acc_reg[3]/D (DFF_X1), TNS {tns:.2f}"
    )
    assert lines[1].startswith(
        "end table min_delay/hold group core_clk: 1 row(s), 1 violating, worst slack -0.03"
    )


def test_summary_rows_are_read_by_their_columns_with_the_slack_alone():
    rows = [item for item in parse_text(SUMMARY) if isinstance(item, SummaryRow)]
    assert rows == [
        SummaryRow("u_core/ctl_reg/Q (DFF_X1)", "u_core/acc_reg[3]/D (DFF_X1)", -0.25, None, 3),
        SummaryRow("in_valid (input)", "u_core/acc_reg[2]/D (DFF_X1)", 0.05, None, 4),
    ]


def test_a_summary_table_without_met_or_violated_counts_negative_slack_and_says_so(tmp_path):
    [line] = summary(tmp_path, SUMMARY).lines
    assert line.text.startswith(
        "summary table: 2 row(s), 1 with negative slack (no MET/VIOLATED given), worst slack -0.25"
    )


def test_slack_only_rows_are_shown_as_reported(tmp_path):
    assert [item for item in parse_text(SLACK_ONLY) if isinstance(item, SlackOnlyRow)] == [
        SlackOnlyRow("core_clk", -0.25, 3),
        SlackOnlyRow("io_clk", 1.5, 4),
    ]
    texts = [line.text for line in summary(tmp_path, SLACK_ONLY).lines]
    assert texts == [
        "slack_only table: group core_clk slack -0.25 (as reported)",
        "slack_only table: group io_clk slack 1.50 (as reported)",
    ]


def test_short_paths_one_after_another_are_each_complete():
    paths = [item for item in parse_text(SHORT * 3) if isinstance(item, StaPath)]
    assert [(path.short, path.truncated, path.first_line) for path in paths] == [
        (True, False, 1),
        (True, False, 6),
        (True, False, 11),
    ]


def test_a_short_path_is_complete_and_the_table_after_it_is_read(tmp_path):
    text = SHORT + END_TABLES
    items = parse_text(text)
    [path] = [item for item in items if isinstance(item, StaPath)]
    assert path.short and not path.truncated and path.slack is None and path.last_line == 5
    assert len([item for item in items if isinstance(item, EndRow)]) == 4  # none swallowed
    excerpt = summary(tmp_path, text)
    assert (
        "1 path(s) in -format short: startpoint, endpoint, group and type read; slack and "
        "arrival not printed, so unknown" in excerpt.summary
    )
    assert "truncated" not in excerpt.summary
    assert excerpt.lines[0].text == (
        "u_core/acc_reg[3] · slack and arrival unknown (-format short prints neither) · "
        "core_clk max · from u_core/ctl_reg"
    )


def test_what_no_reader_understands_is_said_with_its_lines(tmp_path):
    text = (
        "OpenROAD 2.0 banner\nreport_checks -format json\n"
        + '{"checks": [\n{"slack": "late"}\n]}\n\n'
        + SLACK_ONLY
    )
    said = [item for item in parse_text(text) if isinstance(item, Unrecognised)]
    assert said == [
        Unrecognised(1, 2, 2),
        Unrecognised(3, 6, 3),
    ]  # a JSON check without a slack number
    assert [
        item for item in parse_text(text) if isinstance(item, SlackOnlyRow)
    ]  # still read after it
    assert summary(tmp_path, text).summary.endswith(  # touching ranges joined, none hidden
        "; 6 of 11 line(s) not recognised (1 of them blank), at L1–L6; the other 5 line(s) read"
    )


def test_the_fast_scan_reads_these_formats_as_the_line_parser_does():
    pt = primetime_path("u_core/acc_reg", "2.30", "1.90", "-0.40", "VIOLATED")
    data = (
        SHORT
        + END_TABLES
        + "junk\n"
        + SUMMARY
        + SLACK_ONLY
        + SHORT
        + pt
        + OPENLANE_SUMMARY
        + CHECK_TYPES
        + JSON_REPORT
        + "tail\n"
    ).encode()
    for chunk in (64, 257, 4096, 1 << 20):
        assert fast(data, chunk) == reference(data)


OPENLANE_SUMMARY = """\
===========================================================================
report_tns
============================================================================
tns 0.00

===========================================================================
report_wns
============================================================================
wns 0.00

===========================================================================
report_worst_slack -max (Setup)
============================================================================
worst slack 7.06

===========================================================================
report_worst_slack -min (Hold)
============================================================================


worst slack 0.13
worst slack corner nom_tt_025C_1v80: 0.21
"""


def test_openlane_figures_keep_the_check_their_title_names(tmp_path):
    excerpt = summary(tmp_path, OPENLANE_SUMMARY)
    texts = [line.text for line in excerpt.lines]
    assert texts == [
        "tns 0.00 (as reported)",
        "wns 0.00 (as reported)",
        "worst slack max (setup) 7.06 (as reported)",
        "worst slack min (hold) 0.13 (as reported)",
        "worst slack corner nom_tt_025C_1v80 0.21 (as reported)",
    ]
    assert "not recognised" not in excerpt.summary


def primetime_path(endpoint: str, arrival: str, required: str, slack: str, status: str) -> str:
    """A path in PrimeTime's layout: `Point Incr Path`, required after arrival, then the recap."""
    return f"""\
  Startpoint: u_core/ctl_reg (rising edge-triggered flip-flop clocked by CLK)
  Endpoint: {endpoint} (rising edge-triggered flip-flop clocked by CLK)
  Path Group: CLK
  Path Type: max

  Point                                    Incr       Path
  -----------------------------------------------------------
  clock CLK (rise edge)                    0.00       0.00
  u_core/ctl_reg/CK (DFF_X1)               0.00       0.00 r
  u_core/ctl_reg/Q (DFF_X1)                0.40       0.40 f
  {endpoint}/D (DFF_X1)              {float(arrival) - 0.40:.2f}       {arrival} f
  data arrival time                                   {arrival}

  clock CLK (rise edge)                    2.00       2.00
  library setup time                      -0.10       {required}
  data required time                                  {required}
  -----------------------------------------------------------
  data required time                                  {required}
  data arrival time                                  -{arrival}
  -----------------------------------------------------------
  slack ({status})                                   {slack}

"""


def test_a_primetime_pair_with_a_flip_is_read_as_a_flip(tmp_path):
    from tools.sta import diff as stadiff

    before = primetime_path("u_core/acc_reg", "1.80", "1.90", "0.10", "MET")
    after = primetime_path("u_core/acc_reg", "2.30", "1.90", "-0.40", "VIOLATED")
    [path] = [item for item in parse_text(after) if isinstance(item, StaPath)]
    assert (path.slack, path.status, path.arrival, path.required) == (-0.40, "VIOLATED", 2.30, 1.90)
    assert round(path.required - path.arrival, 2) == path.slack  # the report's own figures agree
    records = {
        name: one_record(tmp_path / name, "r.rpt", "sta_report", text)
        for name, text in (("b", before), ("a", after))
        if (tmp_path / name).mkdir() is None
    }
    excerpt = stadiff.stadiff(
        stadiff.DiffArgs(before="r", after="r"), {"before": records["b"], "after": records["a"]}
    )
    assert excerpt.summary.startswith("1 flipped, 0 unconstrained, 0 added, 0 removed, 0 changed")
    assert "MET→VIOLATED" in excerpt.lines[0].text and "-0.50" in excerpt.lines[0].text


CHECK_TYPES = """\
max slew

Pin                                    Limit    Slew   Slack
------------------------------------------------------------
u_pad/buf2/A                            0.20    0.35   -0.15 (VIOLATED)
u_core/inv7/A                           0.20    0.26   -0.06 (VIOLATED)

max fanout

Pin                                   Limit Fanout  Slack
---------------------------------------------------------
rst_n                                     8     12        (VIOLATED)

max capacitance

Pin                                    Limit     Cap   Slack
------------------------------------------------------------
rst_n                                   0.05    0.12   -0.07 (VIOLATED)

                                     Required  Actual
Pin                                    Width   Width   Slack
------------------------------------------------------------
u_core/acc_reg[3]/CK (high)             0.06    0.05   -0.01 (VIOLATED)
u_core/acc_reg[2]/CK (high)             0.06    5.00    4.94 (MET)

"""


def test_check_types_sections_are_violations_of_their_own_kind(tmp_path):
    rows = [item for item in parse_text(CHECK_TYPES) if isinstance(item, LimitRow)]
    assert [(row.check, row.pin, row.slack) for row in rows] == [
        ("max slew", "u_pad/buf2/A", -0.15),
        ("max slew", "u_core/inv7/A", -0.06),
        ("max fanout", "rst_n", None),
        ("max capacitance", "rst_n", -0.07),
        ("min pulse width", "u_core/acc_reg[3]/CK (high)", -0.01),
        ("min pulse width", "u_core/acc_reg[2]/CK (high)", 4.94),
    ]
    for row in rows:  # each slack is limit minus value, or value minus limit, as the check reads
        if row.slack is not None:
            assert round(abs(row.limit - row.value), 2) == abs(row.slack)
    excerpt = summary(tmp_path, CHECK_TYPES)
    assert [line.text for line in excerpt.lines] == [
        "max slew: 2 pin(s), 2 violating, worst slack -0.15 at u_pad/buf2/A (limit checks, as reported)",
        "max fanout: 1 pin(s), 1 violating, first at rst_n (limit checks, as reported)",
        "max capacitance: 1 pin(s), 1 violating, worst slack -0.07 at rst_n (limit checks, as reported)",
        "min pulse width: 2 pin(s), 1 violating, worst slack -0.01 at u_core/acc_reg[3]/CK (high) (limit checks, as reported)",
    ]
    assert "not recognised" not in excerpt.summary


def test_tns_and_deltas_are_exact_decimals_on_the_reports_digits(tmp_path):
    from decimal import Decimal

    from tools.sta.figures import difference, negative_sum

    slacks = [-0.1, -0.1, -0.1, 0.2, None]
    assert sum(s for s in slacks if s is not None and s < 0) != -0.3  # binary floats drift
    assert negative_sum(slacks) == Decimal("-0.3")
    assert difference(2.3, 1.9) == Decimal("0.4") and 2.3 - 1.9 != 0.4
    rows = "\n".join(f"u/r{n}/D (DFF_X1)   2.00   2.10   -0.10 (VIOLATED)" for n in range(3))
    text = "max_delay/setup group clk\n\nEndpoint   Delay   Delay   Slack\n" + rows + "\n\n"
    excerpt = summary(tmp_path, text)
    assert ", TNS -0.30 (" in excerpt.lines[0].text
    assert "TNS sums the negative slacks in exact decimal" in excerpt.summary


JSON_REPORT = """\
{"checks": [
{
  "type": "check",
  "path_group": "core_clk",
  "path_type": "max",
  "startpoint": "u_core/ctl_reg/CK",
  "endpoint": "u_core/acc_reg[3]/D",
  "source_path": [
    {"pin": "u_core/ctl_reg/CK", "arrival": 0.000e+00},
    {"pin": "u_core/acc_reg[3]/D", "arrival": 2.350e-09}
  ],
  "data_arrival_time": 2.350e-09,
  "required_time": 2.100e-09,
  "slack": -2.500e-10
},
{
  "type": "output_delay",
  "path_group": "core_clk",
  "path_type": "max",
  "startpoint": "u_core/out_reg/CK",
  "endpoint": "dout[0]",
  "data_arrival_time": 1.000e-09,
  "required_time": 8.000e-09,
  "slack": 7.000e-09
}
]
}
"""


def test_a_json_report_is_read_in_ns_with_the_slacks_sign(tmp_path):
    paths = [item for item in parse_text(JSON_REPORT) if isinstance(item, StaPath)]
    assert [
        (path.endpoint, path.slack, path.status, path.arrival, path.required) for path in paths
    ] == [
        ("u_core/acc_reg[3]/D", -0.25, "VIOLATED", 2.35, 2.1),
        ("dout[0]", 7.0, "MET", 1.0, 8.0),
    ]
    last = len(JSON_REPORT.splitlines())  # the document's closing line
    assert all(path.from_json and (path.first_line, path.last_line) == (1, last) for path in paths)
    excerpt = summary(tmp_path, JSON_REPORT)
    assert [line.text for line in excerpt.lines] == [
        "json group core_clk type max: 2 path(s), 1 violating, worst slack -0.25 at u_core/acc_reg[3]/D, TNS -0.25 (json paths)"
    ]
    assert (
        "2 path(s) from -format json" in excerpt.summary and "not recognised" not in excerpt.summary
    )


def test_a_diff_says_what_it_did_not_compare(tmp_path):
    from tools.sta import diff as stadiff

    records = {}
    for name, text in (("b", SHORT + JSON_REPORT), ("a", SHORT + JSON_REPORT + SLACK_ONLY)):
        (tmp_path / name).mkdir()
        records[name] = one_record(tmp_path / name, "r.rpt", "sta_report", text)
    excerpt = stadiff.stadiff(
        stadiff.DiffArgs(before="r", after="r"), {"before": records["b"], "after": records["a"]}
    )
    assert excerpt.summary.endswith(
        "; not compared (only text paths are): before: 1 short path(s), 2 json path(s); "
        "after: 1 short path(s), 2 json path(s), 2 table row(s)"
    )
