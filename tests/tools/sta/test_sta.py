"""STA evidence tools over the committed lab pair, with exact expected values."""

import gc

import pytest
from pydantic import ValidationError

from contract.errors import RecordRefusal
from lab import LAB_DIR
from scenario.registry import load_scenario
from tools.sta import diff as stadiff
from tools.sta import paths as sta_paths
from tools.sta import summary as sta

EXACT = "Δ = after − before, exact decimal on the reports' digits"

BEFORE, AFTER = "lab/sta/setup_before.rpt", "lab/sta/setup_after.rpt"


@pytest.fixture(scope="module")
def sta1():
    return load_scenario(LAB_DIR / "STA1.toml")


def test_summary_per_group_and_corner(sta1):
    excerpt = sta.stasummary(sta.ReportArgs(report=AFTER), {"report": sta1.records[AFTER]})
    texts = [line.text for line in excerpt.lines]
    assert (
        "group core_clk corner ss_0p72v_125c type max: 2 paths to 2 endpoints, 1 violating, WNS -0.25 at u_core_clk/dst_reg[0], TNS -0.25 (listed paths)"
        in texts
    )
    assert texts[-2:] == [  # each figure beside the listed paths' own, which agree here
        "tns -0.25 (as reported); listed max paths give TNS -0.25: agrees",
        "wns -0.25 (as reported); listed max paths give WNS -0.25: agrees",
    ]
    assert excerpt.summary.startswith(
        "12 constrained paths to 12 endpoint(s) in 6 group/corner/mode/path type(s)"
    )


def test_paths_worst_first_with_filters(sta1):
    violating = sta_paths.stapaths(
        sta_paths.PathsArgs(report=AFTER, status="VIOLATED"), {"report": sta1.records[AFTER]}
    )
    assert [line.number for line in violating.lines] == [1]
    assert violating.lines[0].text.startswith("u_core_clk/dst_reg[0] · slack -0.25 (VIOLATED)")
    group = sta_paths.stapaths(
        sta_paths.PathsArgs(report=AFTER, group="asynchronous", limit=2),
        {"report": sta1.records[AFTER]},
    )
    assert len(group.lines) == 2 and group.truncated and "of 4 matching" in group.summary


def test_one_path_with_its_line_numbers(sta1):
    excerpt = sta_paths.stapath(
        sta_paths.PathArgs(report=AFTER, endpoint="u_core_clk/dst_reg[0]"),
        {"report": sta1.records[AFTER]},
    )
    assert (excerpt.lines[0].number, excerpt.lines[0].text) == (
        1,
        "Startpoint: u_core_clk/src_reg[0] (rising edge-triggered flip-flop clocked by core_clk)",
    )
    assert excerpt.lines[-1].text.strip() == "-0.25   slack (VIOLATED)"
    missing = sta_paths.stapath(
        sta_paths.PathArgs(report=AFTER, endpoint="nope", path_type="min"),
        {"report": sta1.records[AFTER]},
    )
    assert not missing.lines and "no min path" in missing.summary


def test_diff_flips_additions_removals_and_changed_startpoints(sta1):
    records = {"before": sta1.records[BEFORE], "after": sta1.records[AFTER]}
    excerpt = stadiff.stadiff(stadiff.DiffArgs(before=BEFORE, after=AFTER, limit=200), records)
    assert (
        excerpt.summary
        == "1 flipped, 0 unconstrained, 1 added, 1 removed, 10 changed; showing 13; " + EXACT
    )
    texts = [line.text for line in excerpt.lines]
    assert texts[0] == (
        "[after] flipped MET→VIOLATED: u_core_clk/dst_reg[0] (core_clk ss_0p72v_125c max) slack 7.02 → -0.25 "
        "(Δ -7.27: Δarrival +7.27, Δrequired +0.00)"
    )
    assert any(text.startswith("[after] added: u_core_clk/added_reg[0]") for text in texts)
    assert any(text.startswith("[before] removed: u_io_clk/dst_reg[0]") for text in texts)
    assert any(
        "startpoint u_core_clk/src_reg[1] → u_core_clk/new_src_reg" in text for text in texts
    )


@pytest.mark.parametrize("enabled", [True, False])
def test_diff_shows_the_first_changes_in_rank_order(sta1, enabled):
    """Flips, then added and removed together by slack, then the largest slack losses; the
    collector, paused while the indexes grow, is left as it was found."""
    records = {"before": sta1.records[BEFORE], "after": sta1.records[AFTER]}
    (gc.enable if enabled else gc.disable)()
    try:
        shown = {
            limit: stadiff.stadiff(
                stadiff.DiffArgs(before=BEFORE, after=AFTER, limit=limit), records
            )
            for limit in (1, 3, 5)
        }
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert [line.number for line in shown[5].lines] == [1, 210, 39, 134, 77]
    assert [line.text.split(":")[0] for line in shown[3].lines] == [
        "[after] flipped MET→VIOLATED",
        "[after] added",
        "[before] removed",
    ]
    assert shown[1].lines == shown[5].lines[:1] and all(e.truncated for e in shown.values())
    assert shown[5].lines[3].text.split("(Δ")[1].startswith(" -0.39")


def test_reports_are_looked_up_by_exact_id(sta1):
    with pytest.raises(RecordRefusal) as caught:
        sta1.lookup("lab/sta/hold_after.rpt", "sta_report", "stasummary")
    assert caught.value.code == "unapproved_record"


@pytest.mark.parametrize(
    "args",
    [
        {"report": AFTER, "limit": True},
        {"report": AFTER, "status": "BAD"},
        {"report": AFTER, "extra": 1},
    ],
)
def test_arguments_are_strict(args):
    with pytest.raises(ValidationError):
        sta_paths.PathsArgs.model_validate(args)
