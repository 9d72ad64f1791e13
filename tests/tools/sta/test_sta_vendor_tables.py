"""The commercial tools' summary reports (issue 53, item 5, and Innovus' timeDesign): Synopsys'
`report_constraint -all_violators`, `report_global_timing`, `report_qor` and "No paths with slack
less than …", Innovus' timeDesign summary. Each sample in `tests/data/sta/` (sources in
`tests/data/SOURCES.md`) is read through the real tools and checked against an independent reading
of its raw text (`tests/tools/sta/vendor_reference.py`); the lines a reader consumes are no longer
said unread, and a report's statement that it holds nothing is a true zero, said with its line."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import one_record
from tests.tools.sta import vendor_reference as ref
from tests.tools.sta.test_stascan import fast, reference
from tools.excerpt import Excerpt
from tools.sta import paths as sta_paths
from tools.sta import summary as sta
from tools.sta.figures import figure, negative_sum

DATA = Path(__file__).resolve().parents[2] / "data" / "sta"


def sample(name: str) -> str:
    return (DATA / name).read_text()


def summary(tmp_path: Path, text: str) -> Excerpt:
    record = one_record(tmp_path, "r.rpt", "sta_report", text)
    return sta.stasummary(sta.ReportArgs(report="r"), {"report": record})


def paths(tmp_path: Path, text: str, **args: object) -> Excerpt:
    record = one_record(tmp_path, "r.rpt", "sta_report", text)
    return sta_paths.stapaths(sta_paths.PathsArgs(report="r", **args), {"report": record})


def by_line(excerpt: Excerpt) -> dict[int, str]:
    return {line.number: line.text for line in excerpt.lines}


def pairs(excerpt: Excerpt) -> set[tuple[int, str]]:
    return {(line.number, line.text) for line in excerpt.lines}


def all_read(excerpt: Excerpt, text: str) -> bool:
    return excerpt.summary.endswith(f"; all {len(text.splitlines())} line(s) read")


def test_dc_constraint_violators_are_table_rows_and_design_rule_rows(tmp_path):
    text = sample("dc_constraint_all_violators.rpt")
    truth = ref.constraint_rows(text)
    said = by_line(found := summary(tmp_path, text))
    assert all_read(found, text), found.summary
    for section in dict.fromkeys(row.section for row in truth):
        rows = [row for row in truth if row.section == section]
        worst = min(rows, key=lambda row: row.slack)
        violating = sum(row.status == "VIOLATED" for row in rows)
        if "group" in section:
            tns = figure(negative_sum(row.slack for row in rows))
            expected = (
                f"end table {section}: {len(rows)} row(s), {violating} violating, worst slack "
                f"{figure(worst.slack)} at {worst.name}, TNS {tns} (table rows, counted apart "
                "from the paths)"
            )
        else:
            expected = (
                f"{section}: {len(rows)} net(s), {violating} violating, worst slack "
                f"{figure(worst.slack)} at {worst.name} (limit checks, as reported)"
            )
        assert said[worst.line] == expected
    for section, number, count, total in ref.totals(text):
        listed = len({row.name for row in truth if row.section == section})
        assert said[number] == (
            f"{section}: Total {count} {total} (as reported); listed {section} rows show "
            f"{listed} violating net(s): agrees"
        )


def test_stapaths_lists_the_violators_of_a_constraint_report(tmp_path):
    text = sample("dc_constraint_all_violators.rpt")
    timing = [row for row in ref.constraint_rows(text) if "group" in row.section]
    for group in (None, "clk"):
        chosen = [row for row in timing if group is None or f"('{group}' group)" in row.section]
        found = paths(tmp_path, text, status="VIOLATED", **({"group": group} if group else {}))
        assert found.summary.startswith(
            f"0 of 0 matching path(s), worst first; {len(chosen)} of {len(chosen)} matching "
            "table row(s), worst first"
        ), found.summary
        said = by_line(found)
        assert sorted(said) == sorted(row.line for row in chosen)
        for row in chosen:
            assert said[row.line].startswith(
                f"{row.name} · slack {figure(row.slack)} ({row.status}) · {row.section}"
            )
    assert paths(tmp_path, text, status="MET").summary.startswith(
        "0 of 0 matching path(s), worst first; 0 of 0 matching table row(s)"
    )


def test_primetime_constraint_rows_keep_their_scenario_and_wrapped_names(tmp_path):
    text = sample("pt_constraint_scenarios.rpt")
    truth = ref.constraint_rows(text)
    found = summary(tmp_path, text)
    assert all_read(found, text), found.summary
    keys = dict.fromkeys((row.section, row.scenario) for row in truth)
    for section, scenario in keys:
        rows = [row for row in truth if (row.section, row.scenario) == (section, scenario)]
        worst = min(rows, key=lambda row: row.slack)
        assert (
            worst.line,
            f"{section} (corner {scenario}): {len(rows)} pin(s), {len(rows)} violating, worst "
            f"slack {figure(worst.slack)} at {worst.name} (limit checks, as reported)",
        ) in pairs(found)


def test_a_clean_constraint_report_is_a_true_zero_with_its_line(tmp_path):
    text = sample("dc_constraint_clean.rpt")
    [(number, statement)] = [
        (n, line) for n, line in enumerate(text.splitlines(), 1) if line.startswith("This design")
    ]
    found = summary(tmp_path, text)
    assert all_read(found, text) and by_line(found)[number] == statement
    listed = paths(tmp_path, text, status="VIOLATED")
    assert f"the report says: {statement} (L{number})" in listed.summary


def test_no_paths_with_slack_less_than_is_read_and_quoted(tmp_path):
    text = sample("pt_timing_no_paths.rpt")
    [(number, statement)] = [
        (n, line)
        for n, line in enumerate(text.splitlines(), 1)
        if re.fullmatch(r"No paths with slack less than \S+\.", line)
    ]
    found = summary(tmp_path, text)
    assert all_read(found, text) and by_line(found)[number] == statement
    listed = paths(tmp_path, text, status="VIOLATED")
    assert listed.summary.startswith("0 of 0 matching path(s)")
    assert f"the report says: {statement} (L{number})" in listed.summary


def test_global_timing_figures_are_shown_as_the_report_states_them(tmp_path):
    text = sample("pt_global_timing.rpt")
    found = summary(tmp_path, text)
    assert all_read(found, text), found.summary
    lines = text.splitlines()
    for title, columns in ref.global_timing(text).items():
        after = lines.index(title) + 1
        wns = next(n for n, line in enumerate(lines, 1) if n > after and line[:3] == "WNS")
        for column, (worst, total, violating) in columns:
            assert (
                wns,
                f"report_global_timing {title}, {column}: WNS {worst}, TNS {total}, "
                f"NUM {violating} (as reported)",
            ) in pairs(found)
    [hold] = [n for n, line in enumerate(lines, 1) if line == "No hold violations found."]
    assert by_line(found)[hold] == "No hold violations found."
    listed = paths(tmp_path, text, status="VIOLATED")
    table = lines.index("Setup violations") + 1
    assert f"; 1 table(s) of the report's own figures, at L{table}, list no path" in (
        listed.summary
    )


def test_qor_groups_and_design_lines_are_shown_as_reported(tmp_path):
    text = sample("dc_qor.rpt")
    found = summary(tmp_path, text)
    said = by_line(found)
    lines = text.splitlines()
    for title in ("Timing Path Group 'clk'", "Timing Path Group 'io_clk'", "Design Rules"):
        figures = ref.label_values(text, title)
        first = next(n for n, line in enumerate(lines, 1) if line.strip() == title)
        pairs = ", ".join(f"{label} {value}" for _, label, value in figures)
        assert said[first] == f"report_qor {title}: {pairs} (as reported)"
    for number, line in enumerate(lines, 1):
        if design := re.fullmatch(
            r"\s+(Design(?: \(Hold\))?)\s+WNS: (\S+)\s+TNS: (\S+)\s+"
            r"Number of Violating Paths: (\S+)",
            line,
        ):
            assert said[number] == (
                f"report_qor {design[1]}: WNS {design[2]}, TNS {design[3]}, Number of Violating "
                f"Paths {design[4]} (as reported)"
            )
    [hostname] = [n for n, line in enumerate(lines, 1) if "Hostname:" in line]
    assert found.summary.endswith(
        f"; 1 of {len(lines)} line(s) not recognised, at L{hostname}; the other "
        f"{len(lines) - 1} line(s) read"
    ), found.summary


def innovus_lines(text: str, title: str) -> set[tuple[int, str]]:
    """Per column of the mode table, its labelled figures at the first labelled row's line."""
    _, columns, rows = ref.innovus_mode_table(text)
    first = next(n for n, line in enumerate(text.splitlines(), 1) if ":|" in line)
    return {
        (
            first,
            f"{title}, {column}: "
            + ", ".join(f"{label} {values[index]}" for label, values in rows)
            + " (as reported)",
        )
        for index, column in enumerate(columns)
    }


def test_innovus_timedesign_tables_are_read_by_column(tmp_path):
    text = sample("innovus_timedesign_postroute.txt")
    found = summary(tmp_path, text)
    lines = text.splitlines()
    assert all_read(found, text), found.summary
    title = "timeDesign Summary · Setup mode (views func_ss_rcworst)"
    assert innovus_lines(text, title) <= pairs(found)
    for number, line in enumerate(lines, 1):
        if re.match(r"\|\s+max_\w+\s+\|", line):
            label, real, worst, total = ref.pipe_cells(line)
            assert (
                number,
                f"timeDesign Summary · DRVs, {label}: Real Nr nets(terms) {real}, Real Worst Vio "
                f"{worst}, Total Nr nets(terms) {total} (as reported)",
            ) in pairs(found)
    [density] = [n for n, line in enumerate(lines, 1) if line.startswith("Density:")]
    label, value = lines[density - 1].split()
    expected = f"timeDesign Summary · Density: {label.rstrip(':')} {value} (as reported)"
    assert by_line(found)[density] == expected


def test_the_mflowgen_floorplan_summary_with_its_view_rows(tmp_path):
    """A real excerpt (mflowgen's documentation, BSD-3-Clause): the mode table, then one view's
    rows, unlabelled but for the view's name, in the order of the labelled rows above them."""
    text = sample("innovus_floorplan_summary_mflowgen.txt")
    found = summary(tmp_path, text)
    assert all_read(found, text), found.summary
    assert innovus_lines(text, "timeDesign Summary · Setup mode") <= pairs(found)
    lines = text.splitlines()
    _, columns, rows = ref.innovus_mode_table(text)
    [view_at] = [n for n, line in enumerate(lines, 1) if re.match(r"\|\w", line)]
    view_rows = [ref.pipe_cells(line) for line in lines[view_at - 1 : view_at - 1 + len(rows)]]
    view = view_rows[0][0]
    for index, column in enumerate(columns):
        figures = ", ".join(
            f"{label} {cells[index + 1]}" for (label, _), cells in zip(rows, view_rows, strict=True)
        )
        expected = f"timeDesign Summary · Setup mode, view {view} {column}: {figures} (as reported)"
        assert (view_at, expected) in pairs(found)


def test_the_fast_scan_reads_every_sample_as_the_line_parser_does():
    for path in sorted(DATA.glob("*.*")):
        data = path.read_bytes()
        assert fast(data, 64) == reference(data), path.name


def unread_lines(excerpt: Excerpt) -> set[int]:
    """The line numbers inside the ranges `stasummary` says it did not recognise."""
    found = re.search(r"not recognised(?: \(\d+ of them blank\))?, at ([^;]*)", excerpt.summary)
    numbers: set[int] = set()
    for part in found[1].split(", ") if found else ():
        first, _, last = part.removeprefix("L").partition("–L")
        numbers |= set(range(int(first), int(last or first) + 1))
    return numbers


def test_a_name_no_values_follow_is_said_unread_not_taken(tmp_path):
    """A line taken for a wrapped name, then a line that is no row's values: the name's line
    was not read after all, and is said so; the section ends there, so its rows below are said
    unread too, never counted."""
    text = sample("dc_constraint_all_violators.rpt").replace(
        "                                0.88           1.71 r        -0.83  (VIOLATED)\n",
        "   (the row's values were cut here)\n",
    )
    lines = text.splitlines()
    name = lines.index("   u_acc/u_saturate/sat_flag_reg/D") + 1
    rest = next(n for n, line in enumerate(lines, 1) if n > name and not line.strip())
    found = summary(tmp_path, text)
    assert unread_lines(found) == set(range(name, rest)), found.summary
    before = [row for row in ref.constraint_rows(text) if row.line < name]
    assert f"end table max_delay/setup ('clk' group): {len(before)} row(s)" in "\n".join(
        by_line(found).values()
    )


def test_a_table_under_no_timedesign_title_is_not_taken_for_one(tmp_path):
    """Innovus' path tables share the `+---+` borders: without a summary title above, or with a
    first header cell that names no mode, the lines are not read as a summary table."""
    path_table = (
        "+----------+---------+-------+\n"
        "| Instance |  Cell   | Delay |\n"
        "+----------+---------+-------+\n"
        "| u1       | INV_X1  | 0.050 |\n"
        "+----------+---------+-------+\n"
    )
    for text in (path_table, "timeDesign Summary\n\n" + path_table):
        found = summary(tmp_path, text)
        title = 1 if text.startswith("timeDesign") else 0
        expected = set(range(1 + 2 * title, len(text.splitlines()) + 1))
        assert unread_lines(found) == expected, found.summary


ICC2_QOR = """\
Scenario           'func_ss'
Timing Path Group  'clk_i'
----------------------------------------
Levels of Logic:                      9
Critical Path Slack:              -0.21
Total Negative Slack:             -1.40
No. of Violating Paths:              12
----------------------------------------

Scenario           'func_ff'
Timing Path Group  'clk_i'
----------------------------------------
Levels of Logic:                      9
Critical Path Slack:               1.10
Total Negative Slack:              0.00
No. of Violating Paths:               0
----------------------------------------
"""


def test_ic_compiler_ii_qor_groups_name_their_scenario(tmp_path):
    """IC Compiler II's `report_qor`: a `Scenario` line above each path group; the block is
    cited at it (shape read from IC Compiler II's output, generated here)."""
    found = summary(tmp_path, ICC2_QOR)
    assert all_read(found, ICC2_QOR), found.summary
    lines = ICC2_QOR.splitlines()
    for number, line in enumerate(lines, 1):
        if scenario := re.fullmatch(r"Scenario\s+'(\S+)'", line):
            group = re.fullmatch(r"Timing Path Group\s+(.+)", lines[number])
            assert group is not None
            figures = ", ".join(
                f"{label} {value}"
                for label, value in re.findall(
                    r"^([^:\n]+):\s+(\S+)$", "\n".join(lines[number + 2 : number + 6]), re.M
                )
            )
            assert by_line(found)[number] == (
                f"report_qor Timing Path Group {group[1]} (scenario {scenario[1]}): {figures} "
                "(as reported)"
            )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(sorted(path.name for path in DATA.glob("*.*"))), min_size=1, max_size=4
    ),
    st.integers(16, 4096),
)
def test_any_mixture_of_the_samples_reads_alike_and_every_line_is_accounted(names, chunk):
    """Both readers agree on any mixture of these reports and any chunking, and what is read and
    what is said unread add up to the report's length."""
    data = b"".join((DATA / name).read_bytes() for name in names)
    assert fast(data, chunk) == reference(data)
    with tempfile.TemporaryDirectory() as folder:
        found = summary(Path(folder), data.decode())
    total = len(data.decode().splitlines())
    if total and "not recognised" in found.summary:
        read = int(re.search(r"the other (\d+) line\(s\) read", found.summary)[1])
        assert read + len(unread_lines(found)) == total
    elif total:
        assert found.summary.endswith(f"; all {total} line(s) read"), found.summary
