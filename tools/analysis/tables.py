"""Approved records as tables: each is read once through the record reader (hashed, checked against
the sha256 pinned at admission, within the call's limits) into a private file the sandbox loads
before it locks itself. DuckDB never opens a record's own path.

A `history` record is its CSV/TSV as written (header, types sniffed over every row); an
`sta_report` is its path listing, one row per path as the STA tools read it (`tools/sta/scan.py`).
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Sequence
from pathlib import Path

from scenario.delimited import delimiter_for
from scenario.reading import check_time, open_record
from scenario.recordfile import HISTORY_COLUMNS
from scenario.registry import Record
from tools.analysis.worker import TableFile
from tools.logs.familyfold import joined
from tools.logs.familypool import Progress, members_of, scan_family
from tools.sta.reading import Reading
from tools.sta.scan import Row
from tools.sta.summary import report_rows

STA_COLUMNS = {
    "corner": "VARCHAR",
    "mode": "VARCHAR",
    "path_type": "VARCHAR",
    "path_group": "VARCHAR",
    "endpoint": "VARCHAR",
    "startpoint": "VARCHAR",
    "slack": "DOUBLE",
    "status": "VARCHAR",
    "unconstrained": "BOOLEAN",
    "truncated": "BOOLEAN",
    "line": "BIGINT",
}
"""An STA report's table: one row per path, `line` its Startpoint line in the report."""


def table_file(name: str, record: Record, folder: Path) -> TableFile:
    """Record `record` written under `folder` as table `name`."""
    target = folder / f"{name}.csv"
    if record.kind == "sta_report":
        reading = _write_paths(record, target)
        return TableFile(name, target, ",", STA_COLUMNS, reading.unknown(" of the report"))
    with open_record(record) as stream, target.open("wb") as out:
        shutil.copyfileobj(stream, out)
    with target.open(encoding="utf-8", errors="replace") as written:
        header = written.readline().lstrip("\ufeff")
    return TableFile(name, target, delimiter_for(header, HISTORY_COLUMNS), None)


def _write_paths(record: Record, target: Path) -> Reading:
    """The report's paths as rows; returns what the reader did not read of it."""
    reading = Reading()
    with target.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(STA_COLUMNS)
        for count, item in enumerate(report_rows(record)):
            if count % 10_000 == 0:
                check_time()
            if isinstance(item, Row):
                writer.writerow(_path_cells(item))
            else:
                reading.add(item)
    return reading


def _text(value: bytes | None) -> str:
    return "" if value is None else value.decode("utf-8", "replace")


def _path_cells(row: Row) -> list[object]:
    corner, mode, path_type, group, endpoint = row.key
    return [
        _text(corner),
        _text(mode),
        _text(path_type),
        _text(group),
        _text(endpoint),
        _text(row.start),
        "" if row.slack is None else repr(row.slack),
        _text(row.status),
        row.unconstrained,
        row.truncated,
        row.line,
    ]


VERDICT_COLUMNS = {
    "member": "VARCHAR",
    "test": "VARCHAR",
    "status": "VARCHAR",
    "signature": "VARCHAR",
    "note": "VARCHAR",
}
"""A family of logs as triage reads it: one row per member, its verdict (`pass`, `fail`, `none`:
no verdict line, `unread`), its first error's masked signature (its bucket), and why it was not
read or judged."""


def verdicts_file(
    name: str, members: Sequence[Record], folder: Path, progress: Progress | None = None
) -> TableFile:
    """The family's verdicts, read member by member as `triage` reads them, as table `name`."""
    result = joined(scan_family(members_of(members), progress=progress))
    signature = {
        failure: bucket.signature for bucket in result.buckets for failure in bucket.failures
    }
    notes = dict(result.unread) | dict(result.notes)
    target = folder / f"{name}.csv"
    with target.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(VERDICT_COLUMNS)
        for member, test, status in result.outcomes:
            writer.writerow(
                [member, test, status, signature.get((member, test), ""), notes.get(member, "")]
            )
    return TableFile(name, target, ",", VERDICT_COLUMNS)
