"""Who may open a published revision's artifacts (seed 001 §20: a URL is only a locator; a sharing
grant binds the exact recipient, run and revision). Pure: the shares are given."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Share:
    """A grant: `to` may read revision `revision` (run `thread`) of report `report`."""

    to: str
    thread: str
    report: str
    revision: int
    by: str
    at: float


def read_refusal(
    reader: str, owner: str, thread: str, report: str, revision: int, shares: Iterable[Share]
) -> str | None:
    """Why `reader` may not open revision `revision` (run `thread`) of `report`, or None: its
    owner may; anyone else only with a grant naming them, this run and this revision."""
    if type(reader) is not str or not reader:
        return "no reader named"
    if reader == owner:
        return None
    theirs = [share for share in shares if share.to == reader and share.report == report]
    if any(share.thread == thread and share.revision == revision for share in theirs):
        return None
    if theirs:
        granted = ", ".join(
            str(share.revision) for share in sorted(theirs, key=lambda s: s.revision)
        )
        return (
            f"{reader} was granted revision {granted} of report {report}, not revision {revision}"
        )
    return f"only its owner ({owner}) or a reader it was shared with may open revision {revision} of report {report}"
