"""The fast scan gives the same paths as the line parser, whatever the layout and chunking."""

import gzip
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.stagen import PathSpec, render_path
from tests.tools.sta.test_stareport import FULL_PATH, path_specs
from tools.sta.items import Extent, StaPath, Unrecognised
from tools.sta.report import parse
from tools.sta.scan import Row, describe, scan
from tools.stream.lines import MAX_LINE_BYTES


def reference(data: bytes) -> list[tuple]:
    """What the line parser says of each path, in the rows' terms, and every other item."""
    lines = (  # cut as `tools.stream.lines.iter_lines` cuts them
        (number, text[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape"))
        for number, text in enumerate(data.split(b"\n")[: -1 if data.endswith(b"\n") else None], 1)
    )
    return [
        _project_path(item)
        if isinstance(item, StaPath) and not (item.short or item.from_json)
        else item
        for item in parse(lines)
    ]


def _project_path(path: StaPath) -> tuple:
    def raw(text):
        return None if text is None else text.encode("utf-8", "surrogateescape")

    key = (
        raw(path.corner),
        raw(path.mode),
        raw(path.path_type),
        raw(path.group),
        raw(path.endpoint),
    )
    return (
        key,
        raw(path.startpoint),
        path.slack,
        raw(path.status),
        path.truncated,
        path.unconstrained,
        path.first_line,
    )


def fast(data: bytes, chunk_bytes: int = 1 << 20) -> list[tuple]:
    return [
        item[:-1] if isinstance(item, Row) else item for item in scan(io.BytesIO(data), chunk_bytes)
    ]


def spec(**changes) -> PathSpec:
    base = PathSpec(
        "u/src_reg[0]",
        "u/dst_reg[0]",
        "rising edge-triggered flip-flop clocked by clk",
        "rising edge-triggered flip-flop clocked by clk",
        "clk",
        "max",
        2.5,
        9.95,
        corner="ss_0p72v_125c",
    )
    return PathSpec(**{**base.__dict__, **changes})


CANONICAL = render_path(spec())
WRAPPED = "Startpoint: u/\\src_reg[1]\n    (rising edge-triggered flip-flop)\nEndpoint: out[7]\n    (output port)\nPath Group: clk\nPath Type: max\n   5.00   data arrival time\n   4.00   data required time\n  -1.00   slack (VIOLATED)\n"
UNCONSTRAINED = "Startpoint: in1 (input port)\nEndpoint: out1 (output port)\nPath Group: (none)\nPath Type: max\n   0.30   data arrival time\n(Path is unconstrained)\n\n"
TRUNCATED = "\n".join(CANONICAL.splitlines()[:9]) + "\n"
ODD_BLOCKS = [
    WRAPPED,
    UNCONSTRAINED,
    TRUNCATED,
    "Warning: there are 3 unclocked register/latch pins.\n",
    "No paths found.\n\n",
    "tns -12.34\nwns -0.50\nworst slack -0.50\n",
    CANONICAL.replace("   clock clk", "Path Group: other\n   clock clk"),  # a label in the table
    CANONICAL.replace("data arrival time\n", "data arrival time\n   1.00   slack (MET)\n"),
    CANONICAL.replace("data arrival time\n", "data arrival time\n(UNCONSTRAINED)\n"),
    CANONICAL.replace("\n", "\r\n"),
    CANONICAL.replace("Path Group: clk", "Path Group:   clk  "),
    CANONICAL.replace("Path Type: max", "Path Type: max\t\r"),
    CANONICAL.replace("Endpoint: u/dst_reg[0]", "Endpoint: u/dst reg"),
    CANONICAL.replace("(rising edge-triggered flip-flop clocked by clk)\nPath", "(a (b))\nPath"),
    CANONICAL.replace("Corner: ss_0p72v_125c", "Corner: ss\u00a0"),
    CANONICAL.replace("slack (MET)", "slack (MET) extra"),
    CANONICAL + "  Startpoint: indented (input port)\n",
    "\n\n   \n",
    "\x1c Startpoint: odd (input port)\nEndpoint: o (output port)\n   1.00   slack (MET)\n",
    "x" * (MAX_LINE_BYTES + 100) + "\n",
    CANONICAL.replace("9.95   data required", "9.95\xff\xfe data required"),
    render_path(spec(pin="D", stages=2)),
    render_path(spec(pin="E")).replace("\n", "\r\n"),
    render_path(spec(pin="D")).replace("u/dst_reg[0]/D", "u/dst_reg[0]/x/D"),  # two levels: no pin
    render_path(spec(pin="D")).replace(
        "data arrival time\n\n", "data arrival time\n   1.00   data arrival time\n"
    ),
    # `data arrival time` where the pin rule must agree: in a reason, a row, once, never
    render_path(spec(pin="D", start_reason="data arrival time")),
    render_path(spec(pin="D", end_reason="u/dst_reg[0]/Q data arrival time")),
    render_path(spec(pin="D", group="data arrival time")),
    render_path(spec(pin="D", stages=2)).replace("u_cell_1/Z", "u/dst_reg[0]/SI data arrival time"),
    render_path(spec(pin="D")).replace("  -2.50   data arrival time\n", ""),
    render_path(
        spec(pin="D", start_reason="via u/dst_reg[0]/Q x", end_reason="data arrival time")
    ).replace("  -2.50   data arrival time\n", ""),
    render_path(spec(pin="D")).replace("data arrival time", "data arrival"),
]


def test_the_lab_pair_and_hard_cases_read_alike():
    cases = [FULL_PATH, CANONICAL, *ODD_BLOCKS]
    data = "".join(cases).encode("utf-8", "surrogateescape")
    expected = reference(data)
    assert [item[4:6] for item in expected if isinstance(item, tuple)].count((True, False)) == 1
    # the indented Startpoint's header, then blank lines and another Startpoint: -format short
    assert [item.first_line for item in expected if isinstance(item, StaPath) and item.short] == [
        290
    ]
    for chunk in (64, 97, 4096, 1 << 20):
        assert fast(data, chunk) == expected, chunk
    rows = [item for item in scan(io.BytesIO(data), 97) if isinstance(item, Row)]
    described = describe(rows, io.BytesIO(data))
    assert [_project_path(described[row.line]) for row in rows] == [
        item for item in expected if isinstance(item, tuple)
    ]


def test_a_pin_row_makes_the_pin_the_endpoint_in_both_readers():
    data = (render_path(spec(pin="D")) + render_path(spec(pin="E"))).encode()
    assert [row.endpoint for row in _rows(data)] == [b"u/dst_reg[0]/D", b"u/dst_reg[0]/E"]
    assert [path.endpoint for path in _paths(data)] == ["u/dst_reg[0]/D", "u/dst_reg[0]/E"]


def test_canonical_rows_carry_exact_fields():
    [row, extent] = scan(io.BytesIO(CANONICAL.encode()))
    assert extent == Extent(CANONICAL.count("\n"))
    assert row.key == (b"ss_0p72v_125c", None, b"max", b"clk", b"u/dst_reg[0]")
    assert (row.start, row.slack, row.status, row.line, row.offset) == (
        b"u/src_reg[0]",
        7.45,
        b"MET",
        1,
        0,
    )


blocks = st.lists(
    st.one_of(path_specs.map(render_path), st.sampled_from(ODD_BLOCKS)), min_size=1, max_size=8
)


@settings(max_examples=300, deadline=None)
@given(blocks, st.sampled_from([16, 50, 333, 4096, 1 << 20]))
def test_any_mixture_and_chunking_reads_as_the_line_parser_does(parts, chunk):
    data = "".join(parts).encode("utf-8", "surrogateescape")
    assert fast(data, chunk) == reference(data)


@settings(max_examples=100, deadline=None)
@given(blocks)
def test_offsets_find_each_path_again_in_plain_and_gzip_reports(parts):
    data = "".join(parts).encode("utf-8", "surrogateescape")
    rows = [item for item in scan(io.BytesIO(data), 64) if isinstance(item, Row)]
    paths = {path.first_line: path for path in _paths(data)}
    for stream in (io.BytesIO(data), gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data)))):
        found = describe(rows, stream)
        assert {line: _project_path(path) for line, path in found.items()} == {
            line: _project_path(paths[line]) for line in found
        }
        assert set(found) == {row.line for row in rows}
    for row in rows:
        start = data[row.offset :].split(b"\n", 1)[0].decode("utf-8", "replace")
        assert start.strip().startswith("Startpoint:")


def _rows(data: bytes) -> list[Row]:
    return [item for item in scan(io.BytesIO(data)) if isinstance(item, Row)]


def _paths(data: bytes) -> list[StaPath]:
    text = data.decode("utf-8", "replace")
    lines = enumerate(text.split("\n")[: -1 if text.endswith("\n") else None], 1)  # as iter_lines
    return [item for item in parse(lines) if isinstance(item, StaPath)]


def test_a_path_longer_than_a_chunk_is_read_line_by_line():
    long_table = CANONICAL.replace(
        "   clock clk", "   0.01    0.01   u/buf/Z (BUF_X1)\n" * 5000 + "   clock clk"
    )
    data = (long_table + CANONICAL).encode()
    assert fast(data, 4096) == reference(data)
    assert [row[-1] for row in fast(data, 4096) if isinstance(row, tuple)] == [1, 5020]


def test_an_overlong_line_then_a_block_at_a_chunk_boundary():
    data = b"x" * MAX_LINE_BYTES + (CANONICAL + CANONICAL.replace("u/src_reg[0]", "c")).encode()
    assert fast(data, MAX_LINE_BYTES) == reference(data)
    rows = [row for row in fast(data, MAX_LINE_BYTES) if isinstance(row, tuple)]
    assert [row[-1] for row in rows] == [20]  # the first is in line 1
    said = [item for item in fast(data, MAX_LINE_BYTES) if isinstance(item, Unrecognised)]
    assert said[0].first == 1  # the overlong line, and the path its cut start hid, are said


def test_a_name_longer_than_a_line_is_cut_as_the_line_parser_cuts_it():
    data = (CANONICAL.replace("u/dst_reg[0]", "e" * (MAX_LINE_BYTES + 10)) * 2).encode()
    rows = fast(data)
    assert rows == reference(data) and len(rows[0][0][4]) == MAX_LINE_BYTES - len("Endpoint: ")
