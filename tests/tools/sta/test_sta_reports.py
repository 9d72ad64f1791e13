"""STA tools on small reports written by hand: min and max paths, modes and corners, several paths
to one endpoint, three-decimal slacks, paths that lose their constraint, OpenROAD's metric lines,
end tables and files that are not reports at all."""

from pathlib import Path

from scenario.registry import Record
from tests.helpers import one_record
from tools.sta import diff as stadiff
from tools.sta import paths as sta_paths
from tools.sta import summary as sta

EXACT = "Δ = after − before, exact decimal on the reports' digits"


def block(
    endpoint: str,
    slack: str,
    *,
    kind: str = "max",
    corner: str | None = None,
    mode: str | None = None,
    start: str = "u/src_reg",
) -> str:
    """One `report_checks` path; the slack is written exactly as given."""
    status = "VIOLATED" if slack.startswith("-") else "MET"
    fields = "".join(
        f"{name}: {value}\n" for name, value in (("Mode", mode), ("Corner", corner)) if value
    )
    return (
        f"Startpoint: {start} (rising edge-triggered flip-flop clocked by clk)\n"
        f"Endpoint: {endpoint} (rising edge-triggered flip-flop clocked by clk)\n"
        f"Path Group: clk\nPath Type: {kind}\n{fields}\n"
        "  Delay    Time   Description\n"
        "   1.00    1.00   data arrival time\n"
        "   2.00    2.00   data required time\n"
        f"  {slack}   slack ({status})\n\n"
    )


UNCONSTRAINED = (
    "Startpoint: in1 (input port)\nEndpoint: {endpoint} (rising edge-triggered flip-flop)\n"
    "Path Group: (none)\nPath Type: max\n\n   0.30   data arrival time\n(Path is unconstrained)\n\n"
)


def report(folder: Path, text: str, name: str = "r") -> Record:
    (folder / name).mkdir()
    return one_record(folder / name, "r.rpt", "sta_report", text)


def summary(record: Record) -> sta.Excerpt:
    return sta.stasummary(sta.ReportArgs(report="r"), {"report": record})


def diff(before: Record, after: Record, limit: int = 20) -> sta.Excerpt:
    args = stadiff.DiffArgs(before="b", after="a", limit=limit)
    return stadiff.stadiff(args, {"before": before, "after": after})


def test_setup_and_hold_and_each_mode_are_summarised_apart(tmp_path):
    text = (
        block("data_reg[12]/D", "0.85", corner="fast")
        + block("data_reg[12]/D", "0.05", kind="min", corner="fast")
        + block("flag_reg/D", "-0.02", kind="min", corner="fast")
        + block("flag_reg/D", "-0.30", corner="fast", mode="test")
    )
    texts = [line.text for line in summary(report(tmp_path, text)).lines]
    assert [text.split(":")[0] for text in texts] == [
        "group clk corner fast type max",
        "group clk corner fast type min",
        "group clk corner fast mode test type max",
    ]
    assert "WNS 0.85 at data_reg[12]/D, TNS 0.00" in texts[0]
    assert "2 paths to 2 endpoints, 1 violating, WNS -0.02 at flag_reg/D, TNS -0.02" in texts[1]


def test_tns_and_violations_count_each_endpoints_worst_path_once(tmp_path):
    text = (
        block("e_multi", "-0.200")
        + block("e_multi", "-0.100", start="u/other")
        + block("e_unc", "-0.300")
    )
    excerpt = summary(report(tmp_path, text))
    assert (
        "3 paths to 2 endpoints, 2 violating, WNS -0.30 at e_unc, TNS -0.50"
        in excerpt.lines[0].text
    )
    assert excerpt.summary.startswith(
        "3 constrained paths to 2 endpoint(s) in 1 group/corner/mode/path type(s)"
    )


def test_stapath_shows_the_worst_corner_unless_one_is_named(tmp_path):
    text = block("data_reg[12]/D", "0.85", corner="fast") + block(
        "data_reg[12]/D", "-0.05", corner="slow"
    )
    record = report(tmp_path, text)

    def path(**narrowed):
        args = sta_paths.PathArgs(report="r", endpoint="data_reg[12]/D", **narrowed)
        return sta_paths.stapath(args, {"report": record})

    worst = path()
    assert worst.summary.startswith("the worst of 2 matching paths: data_reg[12]/D · slack -0.05")
    assert worst.lines[0].number == block("data_reg[12]/D", "0.85", corner="fast").count("\n") + 1
    assert "slack 0.85" in path(corner="fast").summary
    assert path(corner="typ").summary == "no max path in corner 'typ' ends at 'data_reg[12]/D'"


def test_three_decimal_slacks_keep_their_third_decimal(tmp_path):
    before = report(tmp_path, block("a_reg/D", "0.125") + block("b_reg/D", "0.002"), "b")
    after = report(tmp_path, block("a_reg/D", "0.121") + block("b_reg/D", "-0.002"), "a")
    excerpt = diff(before, after)
    assert excerpt.summary.startswith("1 flipped, 0 unconstrained, 0 added, 0 removed, 1 changed")
    assert "slack 0.002 → -0.002 (Δ -0.004:" in excerpt.lines[0].text
    assert "slack 0.125 → 0.121 (Δ -0.004:" in excerpt.lines[1].text


def test_an_endpoint_that_lost_its_constraint_is_not_called_removed(tmp_path):
    before = report(tmp_path, block("ok_reg/D", "0.50") + block("e_unc", "-0.30"), "b")
    after = report(
        tmp_path, block("ok_reg/D", "0.50") + UNCONSTRAINED.format(endpoint="e_unc"), "a"
    )
    excerpt = diff(before, after)
    assert (
        excerpt.summary
        == "0 flipped, 1 unconstrained, 0 added, 0 removed, 0 changed; showing 1; " + EXACT
    )
    [line] = excerpt.lines
    assert line.number == block("ok_reg/D", "0.50").count("\n") + 1
    assert line.text.startswith("[after] now unconstrained: e_unc · unconstrained")
    assert line.text.endswith("; was slack -0.30 (VIOLATED)")


def test_openroad_metrics_end_tables_and_notices_are_shown(tmp_path):
    text = (
        "Warning: There are 2 unconstrained endpoints.\n\n"
        + block("a_reg/D", "-0.25")
        + "Endpoint                        Required    Arrival     Slack\n"
        + "a_reg/D (DFF)                       2.15       2.40     -0.25 (VIOLATED)\n"
        + "b_reg/D (DFF)                       2.15       1.00      1.15 (MET)\n\n"
        + "tns max -0.25\nwns max -0.25\n"
    )
    excerpt = summary(report(tmp_path, text))
    texts = [line.text for line in excerpt.lines]
    assert texts[0] == "Warning: There are 2 unconstrained endpoints."
    assert texts[2].startswith(
        "end table: 2 row(s), 1 violating, worst slack -0.25 at a_reg/D (DFF)"
    )
    assert texts[-2:] == [
        "tns max -0.25 (as reported); listed max paths give TNS -0.25: agrees",
        "wns max -0.25 (as reported); listed max paths give WNS -0.25: agrees",
    ]
    assert "reported tns/wns shown as reported" in excerpt.summary
    assert "1 warning/notice line(s)" in excerpt.summary


def test_a_file_that_is_no_report_says_so(tmp_path):
    for name, text in (("empty", ""), ("log", "UVM_INFO all good\nsimulation done\n")):
        excerpt = summary(report(tmp_path, text, name))
        assert (
            excerpt.summary.startswith("no report_checks content recognised") and not excerpt.lines
        )


def pin_block(instance: str, pin: str, slack: str, arrival: str = "1.00") -> str:
    """An OpenSTA path whose `Endpoint:` names the instance and whose last data row its pin."""
    status = "VIOLATED" if slack.startswith("-") else "MET"
    return (
        "Startpoint: u/src_reg (rising edge-triggered flip-flop clocked by clk)\n"
        f"Endpoint: {instance} (rising edge-triggered flip-flop clocked by clk)\n"
        "Path Group: clk\nPath Type: max\n\n"
        "  Delay    Time   Description\n"
        "   0.00    0.00   clock clk (rise edge)\n"
        f"   {arrival}    {arrival} ^ {instance}/{pin} (DFF_X1)\n"
        f"           {arrival}   data arrival time\n\n"
        "           2.00   data required time\n"
        f"  {slack}   slack ({status})\n\n"
    )


def test_two_pins_of_one_instance_are_compared_as_two_endpoints(tmp_path):
    before = report(tmp_path, pin_block("reg3", "D", "0.50") + pin_block("reg3", "E", "-0.10"), "b")
    after = report(tmp_path, pin_block("reg3", "D", "-0.20") + pin_block("reg3", "E", "0.30"), "a")
    excerpt = diff(before, after)
    assert excerpt.summary.startswith("2 flipped, 0 unconstrained, 0 added, 0 removed, 0 changed")
    texts = [line.text for line in excerpt.lines]
    assert any("reg3/D" in text and "slack 0.50 → -0.20" in text for text in texts)
    assert any("reg3/E" in text and "slack -0.10 → 0.30" in text for text in texts)
    assert "2 paths to 2 endpoints, 1 violating" in summary(after).lines[0].text


def test_a_pin_moved_to_another_pin_of_its_instance_is_removed_and_added(tmp_path):
    before = report(tmp_path, pin_block("reg3", "D", "0.50"), "b")
    after = report(tmp_path, pin_block("reg3", "E", "0.50"), "a")
    assert diff(before, after).summary.startswith(
        "0 flipped, 0 unconstrained, 1 added, 1 removed, 0 changed"
    )


def test_stapath_takes_a_pin_or_its_instance_but_not_a_name_below_it(tmp_path):
    text = (
        pin_block("reg3", "D", "0.50") + pin_block("reg3", "E", "-0.10") + block("reg3/x", "-0.90")
    )
    record = report(tmp_path, text)

    def path(endpoint: str) -> sta.Excerpt:
        return sta_paths.stapath(
            sta_paths.PathArgs(report="r", endpoint=endpoint), {"report": record}
        )

    assert path("reg3/D").summary.startswith("reg3/D · slack 0.50 (MET)")
    assert path("reg3").summary.startswith("the worst of 2 matching paths: reg3/E · slack -0.10")
    assert path("reg3/x").summary.startswith("reg3/x · slack -0.90")
    assert path("reg").summary == "no max path ends at 'reg'"
