"""STA reports in the shapes real flows write them, each checked against a few lines of regex over
the raw text (never Warrant's parser): design-rule sections kept per corner, a report's own counts
shown beside the listing's with their lines (a disagreement said), `-format short` paths read as
paths with their slack unknown, and every line either read or inside a range said unread.

The shapes are written here and in `report_shapes.py`, not copied: OpenLane's per-corner banner and counts
(`scripts/openroad/sta/multi_corner.tcl`, openlane2's `openlane/scripts/openroad/sta/corner.tcl`),
ORFS's `flow/scripts/report_metrics.tcl` sections (`<stage> <title>` between rules, `setup
violation count N`), OpenSTA's `report_check_types` tables and `-format short` paths (a header
and two blank lines: `ReportPath::reportPathEnd`, `search/test/search_latch_timing.ok`), and its
`report_checks -fields {slew cap input nets fanout} -format full_clock_expanded` table."""

from __future__ import annotations

import re
import tempfile
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.stagen import render_path
from tests.helpers import one_record
from tests.tools.sta.report_shapes import (
    CORNERS,
    EQ_BOTTOM,
    EQ_TOP,
    PINS,
    corner_checks,
    fanout_table,
    orfs_path,
    orfs_report,
)
from tests.tools.sta.test_stareport import path_specs
from tools.excerpt import Excerpt
from tools.sta import paths as sta_paths
from tools.sta import summary as sta


def summary(text: str) -> Excerpt:
    with tempfile.TemporaryDirectory() as folder:
        record = one_record(Path(folder), "r.rpt", "sta_report", text)
        return sta.stasummary(sta.ReportArgs(report="r"), {"report": record})


def per_corner_fanout(text: str) -> dict[str, tuple[list[str], list[tuple[int, int]]]]:
    """Reference: per corner banner, the violating max fanout pins and (line, value) of each
    `max fanout violation count` line, by regex over the raw lines."""
    found: dict[str, tuple[list[str], list[tuple[int, int]]]] = {}
    corner, section = "", ""
    for number, line in enumerate(text.splitlines(), 1):
        if banner := re.fullmatch(r"=+ (\S+) Corner =+", line):
            corner = banner[1]
            found.setdefault(corner, ([], []))
        elif re.fullmatch(r"(max|min) (slew|fanout|capacitance)", line):
            section = line
        elif section == "max fanout" and (
            row := re.fullmatch(r"(\S+)\s+\d+\s+\d+\s+\(VIOLATED\)", line)
        ):
            found[corner][0].append(row[1])
        elif count := re.fullmatch(r"max fanout violation count (\d+)", line):
            found[corner][1].append((number, int(count[1])))
    return found


def test_three_corners_keep_their_design_rule_sections_apart():
    text = "".join(corner_checks(corner, PINS) for corner in CORNERS)
    truth = per_corner_fanout(text)
    texts = {line.number: line.text for line in summary(text).lines}
    said = list(texts.values())
    for corner, (pins, counts) in truth.items():
        assert any(
            t.startswith(f"max fanout (corner {corner}): {len(pins)} pin(s), {len(pins)} violating")
            for t in said
        )
        for number, value in counts:  # the report's own count, at its line, in its corner
            assert texts[number].startswith(
                f"max fanout violation count {value} (as reported, in corner {corner}'s section)"
            )
            assert texts[number].endswith(f"show {len(pins)} violating pin(s): agrees")
    rows = sum(len(pins) for pins, _ in truth.values())
    distinct = len({pin for pins, _ in truth.values() for pin in pins})
    assert (
        f"max fanout across 3 corners: {rows} pin rows, {distinct} distinct pins, {distinct} distinct violating (limit checks, as reported)"
        in said
    )
    assert not any(t.startswith(f"max fanout: {rows} pin(s)") for t in said)  # never merged


def test_corners_with_different_violators_are_each_their_own_and_a_wrong_count_is_said():
    pins = {CORNERS[0]: PINS[:2], CORNERS[1]: PINS, CORNERS[2]: PINS[:1]}
    text = "".join(corner_checks(corner, pins[corner]) for corner in CORNERS)
    text = text.replace("max fanout violation count 1\n", "max fanout violation count 4\n")
    truth = per_corner_fanout(text)
    texts = {line.number: line.text for line in summary(text).lines}
    [(number, value)] = truth[CORNERS[2]][1]
    assert value == 4 and texts[number].endswith(
        f"show {len(truth[CORNERS[2]][0])} violating pin(s): DISAGREES (report 4, listed 1)"
    )
    assert (
        f"1 of the report's own figures DISAGREE with its listing, at L{number}"
        in summary(text).summary
    )


def test_openlanes_counts_after_every_corner_are_across_corners():
    """OpenLane 1's `multi_corner.tcl`: each corner's section names its counts in the line; the
    totals after the last corner's section belong to none of them."""
    sections = "".join(
        f"======================= {corner} Corner ===================================\n\n"
        + fanout_table(PINS)
        + f"\nmax fanout violations count {corner}: {len(PINS)}\n"
        for corner in CORNERS
    )
    text = sections + f"\n{EQ_TOP}\nmax fanout violation count {len(PINS)}\n{EQ_BOTTOM}\n"
    lines = text.splitlines()
    named = [
        n
        for n, line in enumerate(lines, 1)
        if re.fullmatch(r"max fanout violations count \S+: \d+", line)
    ]
    [total] = [
        n for n, line in enumerate(lines, 1) if line.startswith("max fanout violation count")
    ]
    texts = {line.number: line.text for line in summary(text).lines}
    for number, corner in zip(named, CORNERS, strict=True):
        assert texts[number].endswith(
            f"rows in corner {corner} show {len(PINS)} violating pin(s): agrees"
        )
    assert texts[total] == (
        f"max fanout violation count {len(PINS)} (as reported, after 3 corner sections: across "
        f"corners); listed max fanout rows show {len(PINS)} violating pin(s): agrees"
    )


def capacitance_rows(pins: list[str]) -> str:
    """OpenSTA (2025) prints a blank line after each `max capacitance` row."""
    header = "Pin                                    Limit     Cap   Slack\n" + "-" * 60 + "\n"
    rows = "".join(f"{pin:<38}{0.05:>6.2f}{0.12:>8.2f}{-0.07:>8.2f} (VIOLATED)\n\n" for pin in pins)
    return "max capacitance\n\n" + header + rows


def test_capacitance_rows_with_a_blank_line_after_each_are_all_read():
    text = capacitance_rows(PINS)
    rows = len(re.findall(r"^\S+\s+[\d.]+\s+[\d.]+\s+-?[\d.]+ \(VIOLATED\)$", text, re.M))
    excerpt = summary(text)
    assert excerpt.lines[0].text.startswith(f"max capacitance: {rows} pin(s), {rows} violating")
    assert "not recognised" not in excerpt.summary


def listed_violating_endpoints(text: str, path_type: str) -> int:
    """Reference: distinct endpoints with a VIOLATED path of this type, by regex."""
    paths = re.findall(
        r"^Endpoint: (\S+).*?^Path Type: (\w+)$.*?slack \((MET|VIOLATED)\)", text, re.M | re.S
    )
    return len({end for end, kind, status in paths if kind == path_type and status == "VIOLATED"})


def test_an_orfs_reports_own_counts_are_shown_with_their_lines_and_a_disagreement_said():
    text = orfs_report()
    counts = {
        m[1]: (text[: m.start()].count("\n") + 1, int(m[2]))
        for m in re.finditer(r"^(setup|hold) violation count (\d+)$", text, re.M)
    }
    excerpt = summary(text)
    texts = {line.number: line.text for line in excerpt.lines}
    (setup_line, setup), (hold_line, hold) = counts["setup"], counts["hold"]
    listed = listed_violating_endpoints(text, "max")
    assert setup != listed  # the report counts endpoints its listing does not print
    assert texts[setup_line] == (
        f"setup violation count {setup} (as reported); listed max paths show {listed} violating "
        f"endpoint(s): DISAGREES (report {setup}, listed {listed})"
    )
    assert texts[hold_line].endswith(
        f"show {listed_violating_endpoints(text, 'min')} violating endpoint(s): agrees"
    )
    assert hold == 0
    assert f"L{setup_line}" in excerpt.summary.split("DISAGREE with its listing, at ")[1]
    [tns_line] = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("tns max")]
    assert texts[tns_line].startswith("tns max -12.3456 (as reported); listed max paths give TNS")
    assert "…" not in excerpt.summary


def test_an_orfs_report_whose_count_matches_its_listing_says_it_agrees():
    text = orfs_report(setup_count=listed_violating_endpoints(orfs_report(), "max"))
    excerpt = summary(text)
    assert all(
        "DISAGREES" not in line.text for line in excerpt.lines if "violation count" in line.text
    )


def unread_lines(excerpt: Excerpt) -> tuple[list[int], int, int, bool]:
    """From the summary: every line inside the ranges said unread (repeats kept, to be caught),
    the report's length, the lines said read, and whether ranges were joined to stay short."""
    if excerpt.summary.endswith("; the report is empty"):
        return [], 0, 0, False
    found = re.search(
        r"; (?:(\d+) of (\d+) line\(s\) not recognised.*?, at (.*?)( \(joined .*?inside them\))?; the other (\d+) line\(s\) read|all (\d+) line\(s\) read)",
        excerpt.summary,
    )
    assert found, excerpt.summary
    if found[6] is not None:
        return [], int(found[6]), int(found[6]), False
    lines = []
    for first, last in re.findall(r"L(\d+)(?:–L(\d+))?", found[3]):
        lines += range(int(first), int(last or first) + 1)
    joined = found[4] is not None
    assert joined or len(lines) == int(found[1])
    return lines, int(found[2]), int(found[5]), joined


junk_line = st.from_regex(
    r"[a-z#%&*+<>?@_~][a-zA-Z0-9 #%&*+<>?@_~.,;/=()-]{0,40}", fullmatch=True
).filter(
    lambda line: (
        not re.match(r"(tns|wns|worst|max|min|setup|hold|report_)", line)
        and not re.search(r"\((MET|VIOLATED)\)", line)
    )
)
"""A line no STA tool prints: none of OpenSTA's/OpenROAD's keywords begins it, and it says no
MET or VIOLATED (a table row's end)."""
junk = st.lists(junk_line | st.just(""), min_size=1, max_size=4)
RECOGNISED = [
    "Startpoint: a (input port)\nEndpoint: b (output port)\nPath Group: clk\nPath Type: max\n\n\n",
    fanout_table(PINS[:2]),
    "======================= nom_tt_025C_1v80 Corner ===================================\n\n",
    "max fanout violation count 2\ntns max -0.25\n",
    "wns max -0.10\n",  # one read line between two unread ones
    "======================= nom_ss_100C_1v60 Corner ===================================\n",
]
segments = st.lists(
    st.one_of(path_specs.map(render_path), st.sampled_from(RECOGNISED), junk), max_size=12
)


@settings(max_examples=150)
@given(segments)
def test_the_unread_ranges_and_the_lines_read_cover_the_report_exactly(parts):
    lines: list[str] = []
    unread: set[int] = set()
    for part in parts:
        if isinstance(part, list):  # junk: its first to last non-blank line is one unread range
            start = len(lines) + 1
            lines += part
            marks = [n for n, line in enumerate(part, start) if line]
            unread |= set(range(marks[0], marks[-1] + 1)) if marks else set()
        else:
            lines += part.splitlines()
    text = "".join(line + "\n" for line in lines)
    # stretches of junk with only blank lines between are one range
    ordered = sorted(unread)
    for before, after in pairwise(ordered):
        if all(not lines[n - 1] for n in range(before + 1, after)):
            unread |= set(range(before, after))
    said, length, read, joined = unread_lines(summary(text))
    assert not joined and length == len(lines)  # no line lost
    assert len(said) == len(set(said))  # none counted twice
    assert set(said) == unread  # exactly the lines no reader understands
    assert read + len(said) == length


def test_many_unread_stretches_are_joined_but_every_line_stays_inside_a_range():
    path = orfs_path("a", "b", "clk", "max", "0.1000")
    text = "".join(f"odd line {n}\n{path}" for n in range(120))
    junk_at = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("odd line")]
    excerpt = summary(text)
    said, length, read, joined = unread_lines(excerpt)
    assert joined and set(junk_at) <= set(said) and length == len(text.splitlines())
    assert read == length - len(junk_at)
    assert excerpt.summary.count("L") <= 2 * sta.MAX_RANGES + 10
    assert f"{len(junk_at)} of {length} line(s) not recognised" in excerpt.summary
    assert "every unrecognised line is inside them" in excerpt.summary


def short_paths(headers: list[tuple[str, str, str, str]], blanks: int, tail: bool) -> str:
    """OpenSTA's `-format short`: each path's header, then `blanks` blank lines (two as printed;
    fewer where a log dropped them), the last path's maybe cut off."""
    text = ""
    for number, (start, end, group, kind) in enumerate(headers):
        text += (
            f"Startpoint: {start} (rising edge-triggered flip-flop clocked by {group})\n"
            f"Endpoint: {end} (rising edge-triggered flip-flop clocked by {group})\n"
            f"Path Group: {group}\nPath Type: {kind}\n"
        )
        text += "\n" * (blanks if tail or number < len(headers) - 1 else 0)
    return text


header = st.tuples(
    st.from_regex(r"u_[a-z]{1,6}/r[0-9]{1,2}", fullmatch=True),
    st.from_regex(r"u_[a-z]{1,6}/q[0-9]{1,2}", fullmatch=True),
    st.sampled_from(["clk", "core_clock"]),
    st.sampled_from(["max", "min"]),
)


@settings(max_examples=60)
@given(st.lists(header, min_size=1, max_size=6), st.integers(0, 2), st.booleans())
def test_short_paths_are_read_as_paths_with_their_slack_unknown(headers, blanks, tail):
    text = short_paths(headers, blanks, tail)
    truth = re.findall(
        r"^Startpoint: (\S+).*\nEndpoint: (\S+).*\nPath Group: (\S+)\nPath Type: (\S+)$", text, re.M
    )
    excerpt = summary(text)
    assert f"{len(truth)} path(s) in -format short" in excerpt.summary
    assert "truncated" not in excerpt.summary and not excerpt.truncated
    assert [line.text for line in excerpt.lines] == [
        f"{end} · slack and arrival unknown (-format short prints neither) · {group} {kind} · from {start}"
        for start, end, group, kind in truth
    ]


def test_stapaths_and_stapath_say_what_short_paths_do_not_print(tmp_path):
    headers = [("u_a/r1", "u_b/q1", "clk", "max"), ("u_a/r2", "u_b/q2", "clk", "min")]
    text = short_paths(headers, 2, True)
    record = one_record(tmp_path, "r.rpt", "sta_report", text)
    paths = sta_paths.stapaths(sta_paths.PathsArgs(report="r"), {"report": record})
    assert paths.summary == (
        "0 of 0 matching path(s), worst first; 2 -format short path(s) not ranked: their slack "
        "is not printed, so unknown"
    )
    one = sta_paths.stapath(
        sta_paths.PathArgs(report="r", endpoint="u_b/q2", path_type="min"), {"report": record}
    )
    first = (
        text.splitlines().index(
            "Startpoint: u_a/r2 (rising edge-triggered flip-flop clocked by clk)"
        )
        + 1
    )
    assert one.summary.startswith(
        "u_b/q2 · slack and arrival unknown (-format short prints neither) · clk min"
    )
    assert [line.number for line in one.lines][:4] == list(range(first, first + 4))
