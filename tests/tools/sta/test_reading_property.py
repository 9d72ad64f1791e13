"""No answer without its reading (issue 53): a tool's count over a report is either over lines the
reader read, or the answer says unknown and names the lines it did not read.

Reports are built from path blocks the readers know (OpenSTA's, Design Compiler's, Innovus' `.tarpt`,
Genus' and the common UI's, cut from `tests/data/sta/`) and lines no tool prints. The reference is
independent of the readers: the VIOLATED paths are counted by regex over the text, and the unread
lines are the ones the test put there."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.stagen import render_path
from tests.helpers import one_record
from tests.tools.sta.test_stareport import path_specs
from tests.tools.sta.test_stascan import fast, reference
from tools.analysis import analyze
from tools.analysis.query import AnalyzeArgs
from tools.excerpt import Excerpt
from tools.sta import diff as stadiff
from tools.sta import paths as sta_paths
from tools.sta import summary as sta

DATA = Path(__file__).resolve().parents[2] / "data" / "sta"
VIOLATED = re.compile(r"slack \(VIOLATED|^Path \d+: VIOLATED\b", re.M)
"""Reference: a VIOLATED path as OpenSTA, PrimeTime/DC (`slack (VIOLATED…)`) and Cadence
(`Path N: VIOLATED`) print it."""
VIVADO = """\
Timing Report

Slack (VIOLATED) :        -0.247ns  (required time - arrival time)
  Source:                 tx_reg[7]/C
                            (rising edge-triggered cell FDRE clocked by clk_156  {rise@0.000ns fall@3.200ns period=6.400ns})
  Destination:            fifo_wr_reg/D
  Path Group:             clk_156
  Path Type:              Setup (Max at Slow Process Corner)
  Requirement:            6.400ns  (clk_156 rise@6.400ns - clk_156 rise@0.000ns)
  Data Path Delay:        6.512ns  (logic 1.402ns (21.530%)  route 5.110ns (78.470%))
"""
"""A path in a layout no reader here knows (Vivado's), generated: the answer over it is unknown."""


def blocks(name: str, opener: str) -> list[str]:
    """The sample's path blocks, each from its opening line to the next one's."""
    text = (DATA / name).read_text()
    starts = [m.start() for m in re.finditer(rf"^{opener}", text, re.M)]
    return [text[a:b] for a, b in pairwise([*starts, len(text)])]


KNOWN = [
    *blocks("dc_violated.rpt", "  Startpoint:")[:-1],  # the last one holds the shell's `1`
    *blocks("pt_nets.rpt", "  Startpoint:"),
    *blocks("innovus_setup.tarpt", r"Path \d+:"),
    *blocks("innovus_hold.tarpt", r"Path \d+:"),
    *blocks("genus_met.rpt", r"Path \d+:"),
    *blocks("tempus_cui.rpt", r"Path \d+:"),
]
junk_line = st.from_regex(r"~[a-z0-9 ,;=/]{0,30}", fullmatch=True)
"""A line no STA tool prints (none begins with `~`) and no regex of the reference counts."""
segments = st.lists(
    st.one_of(
        path_specs.map(render_path),
        st.sampled_from(KNOWN),
        st.lists(junk_line, min_size=1, max_size=3),
    ),
    max_size=8,
)


def report(parts: list[str | list[str]]) -> tuple[str, list[int]]:
    """The report's text, and the lines the test put there that no reader knows."""
    lines: list[str] = []
    junk: list[int] = []
    for part in parts:
        if isinstance(part, list):
            junk += range(len(lines) + 1, len(lines) + len(part) + 1)
            lines += part
        else:
            lines += part.splitlines()
    return "".join(line + "\n" for line in lines), junk


def unread_ranges(junk: list[int], lines: list[str]) -> list[int]:
    """Reference: the junk lines, and the blank lines between two of them (one stretch, as the
    reader says it)."""
    said = set(junk)
    for before, after in pairwise(junk):
        if all(not lines[n - 1] for n in range(before + 1, after)):
            said |= set(range(before, after))
    return sorted(said)


def said_lines(summary: str) -> list[int]:
    """The lines inside the ranges an answer says were not read (repeats kept, to be caught)."""
    found = re.match(
        r"unknown: (\d+) of (\d+) line\(s\) of this report were not read, at (.*?);", summary
    )
    assert found, summary
    lines: list[int] = []
    for first, last in re.findall(r"L(\d+)(?:–L(\d+))?", found[3]):
        lines += range(int(first), int(last or first) + 1)
    assert len(lines) == int(found[1])
    return lines


def tools_over(folder: Path, text: str) -> dict[str, Excerpt]:
    record = one_record(folder, "r.rpt", "sta_report", text)
    report = {"report": record}
    return {
        "stapaths": sta_paths.stapaths(
            sta_paths.PathsArgs(report="r", status="VIOLATED", limit=200), report
        ),
        "stapath": sta_paths.stapath(
            sta_paths.PathArgs(report="r", endpoint="no/such/pin"), report
        ),
        "stadiff": stadiff.stadiff(
            stadiff.DiffArgs(before="r", after="r"), {"before": record, "after": record}
        ),
        "stasummary": sta.stasummary(sta.ReportArgs(report="r"), report),
    }


@settings(max_examples=40, deadline=None)
@given(segments)
def test_a_count_is_over_the_lines_read_or_the_answer_says_unknown(tmp_path_factory, parts):
    text, junk = report(parts)
    lines = text.splitlines()
    answers = tools_over(tmp_path_factory.mktemp("r"), text)
    violated = len(VIOLATED.findall(text))
    count = re.search(r"(\d+) of (\d+) matching path\(s\)", answers["stapaths"].summary)
    assert count is not None and int(count[1]) == int(count[2]) == violated
    unread = unread_ranges(junk, lines)
    for tool in ("stapaths", "stapath"):
        summary = answers[tool].summary
        assert summary.startswith("unknown: ") == bool(junk), (tool, summary)
        if junk:
            assert said_lines(summary) == unread  # every unread line named, none twice
    diff = answers["stadiff"].summary
    assert ("0 flipped, 0 unconstrained, 0 added, 0 removed, 0 changed" in diff) and (
        diff.startswith("unknown: before: ") == bool(junk)
    )
    read = re.search(
        r"(?:the other (\d+) line\(s\) read|all (\d+) line\(s\) read)$",
        answers["stasummary"].summary,
    )
    if lines:
        assert read is not None
        assert int(read[1] or read[2]) + len(unread) == len(lines)  # read + unread = the report


def test_a_report_no_reader_knows_is_unknown_to_every_tool_never_zero(tmp_path):
    """Item 2: over a report whose paths were not recognised, `stapaths` said "0 of 0"."""
    length = len(VIVADO.splitlines())
    answers = tools_over(tmp_path, VIVADO)
    # every line unread (the blank one inside the range counted with it)
    unknown = f"unknown: {length} of {length} line(s) of this report were not read, at L1–L{length}"
    assert (
        answers["stapaths"].summary
        == f"{unknown}; over the lines read: 0 of 0 matching path(s), worst first"
    )
    assert answers["stapath"].summary.startswith(
        f"{unknown}; over the lines read: no max path ends"
    )
    assert answers["stadiff"].summary.startswith(
        f"unknown: before: {length} of {length} line(s) of the report were not read"
    )


def test_analyze_over_a_report_it_could_not_read_says_unknown(tmp_path):
    record = one_record(tmp_path, "r.rpt", "sta_report", VIVADO)
    args = AnalyzeArgs(
        query="select count(*) as n from p where status = 'VIOLATED'", tables={"p": "r"}
    )
    excerpt = analyze.run(args, {"tables.p": record})
    assert excerpt.computed is not None and excerpt.computed["rows"] == [[0]]
    length = len(VIVADO.splitlines())
    assert excerpt.summary.endswith(
        "; unknown beyond the lines read: table p holds only the paths read, "
        f"{length} of {length} line(s) of the report were not read, at L1–L{length}"
    )
    assert excerpt.unknowns == (
        f"what table p does not hold: {length} of {length} line(s) of the report were not read, "
        f"at L1–L{length}",
    )


def test_a_header_before_lines_no_reader_knows_is_never_said_to_print_no_slack(tmp_path):
    """A path header followed by a table the reader cannot read: its slack was not read, which
    is not "-format short prints neither" (the false reason of item 1)."""
    header = (
        "Startpoint: u/a (rising edge-triggered flip-flop clocked by clk)\n"
        "Endpoint: u/b (rising edge-triggered flip-flop clocked by clk)\n"
        "Path Group: clk\nPath Type: max\n\n"
    )
    text = header + "~an unknown table\n  -0.40 ~its slack\n"
    answers = tools_over(tmp_path, text)
    summary = answers["stasummary"].summary
    assert "not printed" not in summary
    assert "1 path header(s) followed by lines not recognised" in summary
    assert "slack not read, so unknown" in summary
    assert answers["stapaths"].summary.startswith("unknown: 2 of 7 line(s)")
    assert (
        "1 path header(s) not ranked: the lines after them were not read"
        in answers["stapaths"].summary
    )


@settings(max_examples=100, deadline=None)
@given(segments.filter(bool), st.sampled_from([16, 50, 333, 4096, 1 << 20]))
def test_the_scan_reads_any_mixture_of_layouts_as_the_line_parser_does(parts, chunk):
    """OpenSTA's blocks are cut at `Startpoint:` and matched whole; the others go line by line:
    a Cadence path left open must end where the next block starts, whatever the chunking."""
    data = report(parts)[0].encode()
    assert fast(data, chunk) == reference(data)


def test_the_lines_not_read_are_the_answers_unknowns_for_the_handover(tmp_path):
    length = len(VIVADO.splitlines())
    told = f"what {length} of {length} line(s) of the report hold, at L1–L{length}: not read"
    answers = tools_over(tmp_path, VIVADO)
    for tool in ("stapaths", "stapath", "stasummary"):
        assert answers[tool].unknowns == (told,), tool
    assert answers["stadiff"].unknowns == (
        told.replace("the report", "the before report"),
        told.replace("the report", "the after report"),
    )
    (tmp_path / "whole").mkdir()
    fully_read = tools_over(tmp_path / "whole", (DATA / "genus_met.rpt").read_text())
    assert all(answer.unknowns == () for answer in fully_read.values())
