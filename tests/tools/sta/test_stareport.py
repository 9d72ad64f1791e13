"""The report_checks parser over every hard case, with exact expected values."""

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.stagen import PathSpec, render_path
from tools.sta.items import EndRow, Metric, Notice, StaPath, SummaryRow
from tools.sta.report import parse_text

FULL_PATH = """\
Startpoint: reg1 (rising edge-triggered flip-flop clocked by clk)
Endpoint: reg2 (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max
Corner: ss_0p72v_125c

  Delay    Time   Description
---------------------------------------------------------
   0.00    0.00   clock clk (rise edge)
   0.00    0.00   clock network delay (ideal)
   0.00    0.00 ^ reg1/CK (DFF_X1)
   0.08    0.08 ^ reg1/Q (DFF_X1)
   0.02    0.10 v u1/ZN (INV_X1)
           0.10   data arrival time

  10.00   10.00   clock clk (rise edge)
   0.00   10.00   clock network delay (ideal)
          10.00 ^ reg2/CK (DFF_X1)
  -0.04    9.96   library setup time
           9.96   data required time
---------------------------------------------------------
           9.96   data required time
          -0.10   data arrival time
---------------------------------------------------------
           9.86   slack (MET)
"""


def paths(text: str) -> list[StaPath]:
    return [item for item in parse_text(text) if isinstance(item, StaPath)]


def test_a_full_path_with_exact_values():
    [path] = paths(FULL_PATH)
    assert (path.startpoint, path.start_reason) == (
        "reg1",
        "rising edge-triggered flip-flop clocked by clk",
    )
    assert (path.endpoint, path.group, path.path_type, path.corner, path.mode) == (
        "reg2",
        "clk",
        "max",
        "ss_0p72v_125c",
        None,
    )
    assert (path.arrival, path.required, path.slack, path.status) == (0.10, 9.96, 9.86, "MET")
    assert (path.first_line, path.last_line, path.truncated) == (1, 25, False)


def test_wrapped_points_escaped_and_bus_names():
    text = """\
Startpoint: u_core/u_alu/\\result_reg[31]
            (rising edge-triggered flip-flop clocked by core_clk)
Endpoint: u_core/data_out[7]
          (output port clocked by core_clk)
Path Group: core_clk
Path Type: max
          12.50   data arrival time
          12.00   data required time
          -0.50   slack (VIOLATED)
"""
    [path] = paths(text)
    assert path.startpoint == "u_core/u_alu/\\result_reg[31]"
    assert path.start_reason == "rising edge-triggered flip-flop clocked by core_clk"
    assert (path.endpoint, path.end_reason) == (
        "u_core/data_out[7]",
        "output port clocked by core_clk",
    )
    assert (path.slack, path.status) == (-0.5, "VIOLATED")


def test_an_unconstrained_path_has_no_slack():
    text = "Startpoint: in1 (input port)\nEndpoint: out1 (output port)\nPath Group: (none)\nPath Type: max\n           0.30   data arrival time\n(Path is unconstrained)\n"
    [path] = paths(text)
    assert (path.unconstrained, path.slack, path.status, path.truncated, path.arrival) == (
        True,
        None,
        None,
        False,
        0.30,
    )


def test_a_report_truncated_mid_path_says_so():
    cut = "\n".join(FULL_PATH.splitlines()[:14]) + "\n"
    items = paths(FULL_PATH + cut)
    assert [(path.truncated, path.slack) for path in items] == [(False, 9.86), (True, None)]
    assert (items[1].arrival, items[1].first_line, items[1].last_line) == (0.10, 26, 39)


def test_a_new_startpoint_closes_an_unfinished_path_as_truncated():
    cut = "\n".join(FULL_PATH.splitlines()[:8]) + "\n"  # into its table
    items = paths(cut + FULL_PATH)
    assert [(path.truncated, path.slack) for path in items] == [(True, None), (False, 9.86)]


def test_a_header_and_a_blank_line_before_a_new_startpoint_is_a_short_path():
    header = "\n".join(FULL_PATH.splitlines()[:6]) + "\n"  # -format short prints this
    items = paths(header + FULL_PATH)
    assert [(path.short, path.truncated, path.slack) for path in items] == [
        (True, False, None),
        (False, False, 9.86),
    ]


def test_no_paths_found_warnings_crlf_and_negative_zero():
    text = (
        "Warning: there are 3 unclocked register/latch pins.\r\nNo paths found.\r\n"
        + FULL_PATH.replace("9.86   slack (MET)", "-0.00   slack (MET)").replace("\n", "\r\n")
    )
    items = parse_text(text)
    notices = [item.text for item in items if isinstance(item, Notice)]
    assert notices == ["Warning: there are 3 unclocked register/latch pins.", "No paths found."]
    [path] = [item for item in items if isinstance(item, StaPath)]
    assert path.slack == 0.0 and str(path.slack) == "-0.0" and path.status == "MET"


def test_columns_that_run_together():
    text = "Startpoint: a (input port)\nEndpoint: b (output port)\nPath Type: min\n-1700.00 10090.00   data arrival time\n          10100.00   data required time\n          -10.00   slack (VIOLATED)\n"
    [path] = paths(text)
    assert (path.arrival, path.required, path.slack) == (10090.0, 10100.0, -10.0)


def test_end_and_summary_tables_and_metrics():
    text = """\
Endpoint                                  Required   Arrival     Slack
--------------------------------------------------------------------------
reg2/D (DFF_X1)                             9.96       0.10       9.86 (MET)
u_core/data_out[7] (out)                   12.00      12.50      -0.50 (VIOLATED)

Startpoint   Endpoint   Slack
---------------------------------
reg1/CK      reg2/D     9.86 (MET)

tns -12.34
wns -0.50
worst slack -0.50
"""
    items = parse_text(text)
    assert [item for item in items if isinstance(item, EndRow)] == [
        EndRow("reg2/D (DFF_X1)", 9.96, 0.10, 9.86, "MET", 3),
        EndRow("u_core/data_out[7] (out)", 12.0, 12.5, -0.5, "VIOLATED", 4),
    ]
    assert [item for item in items if isinstance(item, SummaryRow)] == [
        SummaryRow("reg1/CK", "reg2/D", 9.86, "MET", 8)
    ]
    assert [(m.name, m.value) for m in items if isinstance(m, Metric)] == [
        ("tns", -12.34),
        ("wns", -0.5),
        ("worst slack", -0.5),
    ]


names = st.from_regex(
    r"[a-z][a-z0-9_]{0,8}(/[a-z][a-z0-9_]{0,8}){0,3}(\[[0-9]{1,2}\])?", fullmatch=True
)
times = st.decimals(min_value=-5000, max_value=5000, places=2).map(float)
path_specs = st.builds(
    PathSpec,
    startpoint=names,
    endpoint=names,
    start_reason=st.sampled_from(
        ["rising edge-triggered flip-flop clocked by clk", "input port clocked by clk"]
    ),
    end_reason=st.sampled_from(
        ["rising edge-triggered flip-flop clocked by clk", "output port clocked by clk"]
    ),
    group=st.sampled_from(["clk", "core_clk", "asynchronous"]),
    path_type=st.sampled_from(["max", "min"]),
    arrival=times,
    required=times,
    mode=st.none() | st.sampled_from(["func", "scan"]),
    corner=st.none() | st.sampled_from(["ss_0p72v_125c", "ff_0p88v_m40c"]),
    stages=st.integers(0, 3),
    pin=st.none() | st.sampled_from(["D", "E", "SE", "RN"]),
)


@settings(max_examples=200)
@given(st.lists(path_specs, min_size=1, max_size=5))
def test_rendered_paths_parse_back_to_the_same_records(specs):
    parsed = paths("".join(render_path(spec) for spec in specs))
    assert [
        (
            p.startpoint,
            p.endpoint,
            p.start_reason,
            p.end_reason,
            p.group,
            p.path_type,
            p.mode,
            p.corner,
            p.arrival,
            p.required,
            p.slack,
            p.status,
            p.truncated,
        )
        for p in parsed
    ] == [
        (
            s.startpoint,
            s.endpoint_pin,
            s.start_reason,
            s.end_reason,
            s.group,
            s.path_type,
            s.mode,
            s.corner,
            s.arrival,
            s.required,
            s.slack,
            "MET" if s.slack >= 0 else "VIOLATED",
            False,
        )
        for s in specs
    ]


def test_two_pins_of_one_instance_are_two_endpoints():
    base = dict(
        startpoint="reg1",
        endpoint="reg3",
        start_reason="rising edge-triggered flip-flop clocked by clk",
        end_reason="rising edge-triggered flip-flop clocked by clk",
        group="clk",
        path_type="max",
        required=9.95,
    )
    text = "".join(
        render_path(PathSpec(**base, arrival=arrival, pin=pin))
        for arrival, pin in ((1.0, "D"), (2.0, "E"), (3.0, None))
    )
    assert [(p.endpoint, p.instance) for p in paths(text)] == [
        ("reg3/D", "reg3"),
        ("reg3/E", "reg3"),
        ("reg3", None),
    ]


PRIMETIME_PIN = """\
  Startpoint: u_core/a_reg (rising edge-triggered flip-flop clocked by CLK)
  Endpoint: u_core/b_reg (rising edge-triggered flip-flop clocked by CLK)
  Path Group: CLK
  Path Type: max

  Point                                    Incr       Path
  ------------------------------------------------------------
  clock CLK (rise edge)                    0.00       0.00
  u_core/a_reg/CP (DFQD1)                  0.00       0.00 r
  u_core/a_reg/Q (DFQD1)                   0.12       0.12 f
  u_core/b_reg/SE (SDFQD1)                 0.05       0.17 f
  data arrival time                                   0.17

  clock CLK (rise edge)                    1.00       1.00
  u_core/b_reg/CP (SDFQD1)                 0.00       1.00 r
  library setup time                      -0.04       0.96
  data required time                                  0.96
  ------------------------------------------------------------
  data required time                                  0.96
  data arrival time                                  -0.17
  ------------------------------------------------------------
  slack (MET)                                         0.79
"""


def test_a_primetime_path_names_the_pin_of_its_last_data_row():
    [path] = paths(PRIMETIME_PIN)
    assert (path.endpoint, path.instance, path.slack) == ("u_core/b_reg/SE", "u_core/b_reg", 0.79)
    # the clock pin row of the same instance, below the arrival time, is not the endpoint's
    assert "CP" not in path.endpoint


def test_openroad_metric_lines_keep_their_max_or_min():
    items = parse_text("tns max -1496.05\nwns max -1496.00\nworst slack min 0.12\ntns maximal 1\n")
    assert [(m.name, m.value, m.line) for m in items if isinstance(m, Metric)] == [
        ("tns max", -1496.05, 1),
        ("wns max", -1496.0, 2),
        ("worst slack min", 0.12, 3),
    ]
