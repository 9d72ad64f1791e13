"""STA report text in the shapes real flows write (see `test_sta_real_shapes.py` for where each
shape was read): corners, a `report_check_types` fanout table, a corner's checks, and ORFS's
paths, sections and whole report."""

from __future__ import annotations

EQ_TOP, EQ_BOTTOM = "=" * 75, "=" * 76
CORNERS = ("nom_tt_025C_1v80", "nom_ss_100C_1v60", "nom_ff_n40C_1v95")
PINS = [f"u_core/_{n}_/X" for n in (101, 205, 333, 470, 512)]


def fanout_table(pins: list[str]) -> str:
    """OpenSTA's `report_check_types -max_fanout -violators` section."""
    rows = "".join(f"{pin:<37}{8:>6}{12:>7}        (VIOLATED)\n" for pin in pins)
    header = "Pin                                   Limit Fanout  Slack\n" + "-" * 57 + "\n"
    return "max fanout\n\n" + header + rows + "\n"


def corner_checks(corner: str, pins: list[str]) -> str:
    """openlane2's `checks.rpt` of one corner: its banner, the limit checks, the counts."""
    return (
        f"\n{EQ_TOP}\n report_check_types -max_slew -max_cap -max_fanout -violators\n{EQ_BOTTOM}\n"
        f"======================= {corner} Corner ===================================\n\n"
        + fanout_table(pins)
        + f"\n\n{EQ_TOP}\nreport_parasitic_annotation -report_unannotated\n{EQ_BOTTOM}\n"
        "Found 0 unannotated drivers.\nFound 0 partially unannotated drivers.\n"
        f"\n{EQ_TOP}\nmax slew violation count 0\nmax fanout violation count {len(pins)}\n"
        f"max cap violation count 0\n{EQ_BOTTOM}\n"
    )


def orfs_path(start: str, end: str, group: str, kind: str, slack: str) -> str:
    """A path as ORFS writes it: `-fields {slew cap input nets fanout} -format
    full_clock_expanded`, four digits."""
    status = "VIOLATED" if slack.startswith("-") else "MET"
    return f"""\
Startpoint: {start} (rising edge-triggered flip-flop clocked by core_clock)
Endpoint: {end} (rising edge-triggered flip-flop clocked by core_clock)
Path Group: {group}
Path Type: {kind}

Fanout     Cap    Slew   Delay    Time   Description
-----------------------------------------------------------------------------
                          0.0000    0.0000   clock core_clock (rise edge)
                          0.0000    0.0000   clock source latency
     1    0.0078    0.0000    0.0000    0.0000 ^ clk (in)
                                         clk (net)
                  0.0000    0.0000    0.0000 ^ {start}/CLK (sky130_fd_sc_hd__dfxtp_1)
     1    0.0017    0.0290    0.3021    0.3021 ^ {start}/Q (sky130_fd_sc_hd__dfxtp_1)
                                         n3 (net)
                  0.0290    0.0000    0.4521 ^ {end}/D (sky130_fd_sc_hd__dfxtp_1)
                                    0.4521   data arrival time

                          1.0000    1.0000   clock core_clock (rise edge)
                          0.0000    1.0000   clock source latency
                                    0.9000   data required time
-----------------------------------------------------------------------------
                                    0.9000   data required time
                                   -0.4521   data arrival time
-----------------------------------------------------------------------------
                                    {slack}   slack ({status})


"""


def orfs_section(title: str, body: str) -> str:
    return f"\n{'=' * 74}\nfinish {title}\n{'-' * 74}\n{body}"


def orfs_report(setup_count: int = 68) -> str:
    """`report_metrics` of one stage: figures, paths, limit checks, then the counts."""
    parts = [
        orfs_section("report_tns", "tns max -12.3456\n"),
        orfs_section("report_wns", "wns max -0.5123\n"),
        orfs_section("report_worst_slack", "worst slack max -0.5123\n"),
        orfs_section("report_clock_min_period", "core_clock period_min = 1.51 fmax = 662.25\n"),
        orfs_section(
            "report_checks -path_delay min",
            orfs_path("_10_", "_11_", "core_clock", "min", "0.0312"),
        ),
        orfs_section(
            "report_checks -path_delay max",
            orfs_path("_20_", "_21_", "core_clock", "max", "-0.5123")
            + orfs_path("_30_", "_31_", "asynchronous", "max", "-0.1000"),
        ),
        orfs_section(
            "report_checks -unconstrained",
            orfs_path("_20_", "_21_", "core_clock", "max", "-0.5123"),
        ),
        orfs_section(
            "report_check_types -max_slew -max_cap -max_fanout -violators", fanout_table(PINS[:3])
        ),
    ]
    for check in ("slew", "fanout", "capacitance"):
        for what, value in (("slack", "0.1234"), ("limit", "1.5000"), ("slack_limit", "0.0823")):
            parts.append(orfs_section(f"max_{check}_check_{what}", value + "\n"))
    parts += [
        orfs_section("max_slew_violation_count", "max slew violation count 0\n"),
        orfs_section("max_fanout_violation_count", "max fanout violation count 3\n"),
        orfs_section("max_cap_violation_count", "max cap violation count 0\n"),
        orfs_section("setup_violation_count", f"setup violation count {setup_count}\n"),
        orfs_section("hold_violation_count", "hold violation count 0\n"),
    ]
    parts += [orfs_section(f"critical path figure {n}", "0.4521\n") for n in range(12)]
    return "".join(parts)
