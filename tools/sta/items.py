"""What a `report_checks` text holds, as the STA readers give it: paths, table rows, limit
checks, figures, the counts a report prints of itself, commercial tools' tables of figures,
notices, the stretches no reader understood and the report's length (`tools.sta.report` reads them, `tools.sta.scan` scans them,
`tools.sta.summary` and `tools.sta.diff` count and compare them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StaPath:
    startpoint: str
    endpoint: str = ""
    """The endpoint's pin where the path's rows name one (`reg3/D`), else the `Endpoint:` name."""
    instance: str | None = None
    """The `Endpoint:` name when the endpoint is one of its pins (`reg3`), else None."""
    start_reason: str | None = None
    end_reason: str | None = None
    group: str | None = None
    path_type: str | None = None
    mode: str | None = None
    corner: str | None = None
    arrival: float | None = None
    required: float | None = None
    slack: float | None = None
    status: str | None = None
    """`MET`, `VIOLATED`, or None for an unconstrained or truncated path."""
    unconstrained: bool = False
    truncated: bool = False
    short: bool = False
    """A `-format short` path: its header only, complete as reported, with no slack."""
    table_unread: bool = False
    """A header read as `-format short`, then a line no reader understood where a table may be:
    its slack is unknown because it was not read, not because it was not printed."""
    from_json: bool = False
    """Read from a `-format json` document (times converted from seconds to ns)."""
    first_line: int = 0
    last_line: int = 0


@dataclass(frozen=True)
class EndRow:
    endpoint: str
    required: float
    arrival: float
    slack: float
    status: str
    line: int
    check: str | None = None
    """The table's title as printed (OpenSTA's `max_delay/setup group clk`, Synopsys'
    `max_delay/setup ('clk' group)`), if it had one."""
    corner: str | None = None
    """The scenario a PrimeTime row names in its own column, if any."""


@dataclass(frozen=True)
class SummaryRow:
    startpoint: str
    endpoint: str
    slack: float
    status: str | None
    """`MET`/`VIOLATED` where the row says it; OpenSTA's `-format summary` gives the slack only."""
    line: int


@dataclass(frozen=True)
class SlackOnlyRow:
    """A `-format slack_only` row: a path group's worst slack."""

    group: str
    slack: float
    line: int


@dataclass(frozen=True)
class LimitRow:
    """A `report_check_types -violators` row: a slew, capacitance or fanout limit check, or a
    minimum pulse width check, of one pin."""

    check: str
    """`max slew`, `max capacitance`, `max fanout` (or `min …`), `min pulse width`."""
    pin: str
    limit: float
    value: float
    slack: float | None
    """None where the report leaves it blank (OpenSTA's fanout rows)."""
    status: str
    line: int
    corner: str | None = None
    """The corner whose section the row is in (OpenLane's `=== name Corner ===` banner above it),
    or the scenario a PrimeTime row names: OpenSTA's rows do not name it, and one pin listed under
    three corners is three rows."""
    element: str = "pin"
    """What the row's first column names: `pin`, or `net` (Design Compiler's design rule rows)."""


@dataclass(frozen=True)
class Unrecognised:
    """Lines no reader here understood (blank lines between them included): said, not dropped."""

    first: int
    last: int
    lines: int
    """How many non-blank lines."""


@dataclass(frozen=True)
class Metric:
    """A `tns`/`wns`/`worst slack` figure as the report prints it."""

    name: str
    value: float
    line: int
    path_type: str | None = None
    """`max` or `min` where the line, its banner or OpenSTA's default says which, else None: a
    bare `tns`/`wns` is max (OpenSTA printed no other before `-min` came, March 2025); a bare
    `worst slack` may be either."""
    corner: str | None = None


@dataclass(frozen=True)
class ReportCount:
    """A count the report prints of itself (`setup violation count 68`, OpenROAD's
    `max fanout violation count 5`, OpenLane's `max slew violations count C: 0`): shown beside
    what the listing holds, never replaced by it."""

    kind: str
    """`setup`, `hold`, `max slew`, `max fanout`, `max capacitance` (or `min …`)."""
    value: int
    line: int
    text: str
    """The line as printed."""
    corner: str | None = None
    """Named by the line, or by the one corner banner above it since the last count of its kind."""
    corners: int = 0
    """Corner banners since the last count of its kind: above 1, the count follows several corner
    sections and is tied to none (OpenLane prints its all-corner totals after them)."""


@dataclass(frozen=True)
class ReportedTable:
    """A table of figures a commercial tool prints of a whole design or of one group or path
    category (PrimeTime's `report_global_timing`, a `report_qor` block, Innovus' timeDesign
    tables): every figure as printed, never recomputed, never compared with a listing (it counts
    paths no listing in the report shows)."""

    title: str
    """`report_global_timing Setup violations`, `report_qor Timing Path Group 'clk'`, …"""
    figures: tuple[tuple[str, str, str, int], ...]
    """(column or row group, figure name, value as printed, its line); the group is "" for a
    block of `Label: value` lines."""
    first: int
    last: int


@dataclass(frozen=True)
class Extent:
    """The report's number of lines, last of all: what is read and what is not add up to it."""

    lines: int


@dataclass(frozen=True)
class Notice:
    """A warning or error line, or the report's own statement that it holds nothing to list
    (`No paths found.`, `No paths with slack less than 0.00.`, `This design has no violated
    constraints.`, `No setup violations found.`): a true zero, with its line."""

    text: str
    line: int


Item = (
    StaPath
    | EndRow
    | SummaryRow
    | SlackOnlyRow
    | LimitRow
    | Metric
    | ReportCount
    | ReportedTable
    | Notice
    | Unrecognised
    | Extent
)
