"""Which delimiter a history file uses: `,` (CSV), `;` (CSV as European spreadsheets save it) or a
tab (TSV), told from its header line by the columns it must have."""

from __future__ import annotations

import csv
from collections.abc import Collection, Sequence

DELIMITERS = (",", ";", "\t")
"""Tried in this order; the first under which the header has every required column wins."""


def header_cells(header: str, delimiter: str) -> list[str]:
    """The header's column names, stripped and lower-cased."""
    return [cell.strip().lower() for cell in next(csv.reader([header], delimiter=delimiter), [])]


def delimiter_for(header: str, required: Collection[str]) -> str:
    """The delimiter under which `header` names the most of `required` (all of them, for a
    file that can be read), the earlier of `DELIMITERS` on a tie."""
    return max(
        DELIMITERS, key=lambda delimiter: len(set(required) & set(header_cells(header, delimiter)))
    )


def missing_columns(header: str, required: Sequence[str]) -> list[str]:
    """The `required` columns the header lacks, under the delimiter that names the most of them."""
    columns = set(header_cells(header, delimiter_for(header, required)))
    return [name for name in required if name not in columns]
