"""Building blocks for strict tool argument models.

Strict mode: `True` is not an int, `"5"` is not an int, `5.0` is not an int; extra fields are
refused. Every tool's argument model derives from `ToolArgs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, StringConstraints

from contract.strict import StrictModel
from scenario.manifest import RecordId as RecordId
from scenario.manifest import RecordKind


# No docstring: a model's docstring is its JSON schema's description, shown to choosers.
class ToolArgs(StrictModel):
    reads_every: ClassVar[RecordKind | None] = None
    # A tool with no argument naming records that reads every approved record of this kind
    # (`searchdocs`): the guard resolves each one (`tools/catalog.py`, `ToolSpec.every_record`).


@dataclass(frozen=True)
class Names:
    """Marks an argument that names approved records, so the catalog can tell the guard what to
    resolve: `record` one id, `family` a family of them (a manifest glob or a list of ids), `tables`
    a map of table names to ids; each of one of `kinds`. Validation and the schema ignore it."""

    role: Literal["record", "family", "tables"]
    kinds: tuple[RecordKind, ...]


EVERY = "every"
"""A tool that reads every record of a kind (`ToolArgs.reads_every`) receives each as field
`every.ID`."""

LogId = Annotated[RecordId, Names("record", ("log",))]
SpecId = Annotated[RecordId, Names("record", ("spec",))]
HistoryId = Annotated[RecordId, Names("record", ("history",))]
StaReportId = Annotated[RecordId, Names("record", ("sta_report",))]
WaveformId = Annotated[RecordId, Names("record", ("waveform",))]
RepositoryId = Annotated[RecordId, Names("record", ("repository",))]


def _printable(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain a non-blank character")
    if any((ord(char) < 32 and char != "\t") or ord(char) == 127 for char in value):
        raise ValueError("must not contain control characters (newlines, NUL, …)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (a lone surrogate is not)") from None
    return value


SearchText = Annotated[
    str, StringConstraints(min_length=1, max_length=200), AfterValidator(_printable)
]
"""A query, section name or test name: 1–200 printable characters."""
