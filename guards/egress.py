"""The one gate between Warrant and a model route: nothing derived from a record marked
`share = "local"` leaves for a `remote` route, whoever built the request.

Every request a route is sent passes `gate` (the transport takes only its `Outbound`). Request
builders already withhold local content by structure, putting a reference where an excerpt, a
summary or an unknown quoting it would go; the gate is the last check, for what a builder missed or
a later one forgets: any run of `WINDOW` letters and digits copied from local content is replaced by
a marker, and the outbound request says how many spans it withheld. Letters and digits only, so
that quoting, JSON escaping, markers, changed spacing or case do not hide a copy. Text that also occurs in
what may be shared (the goal, the grant, shareable records) is not counted as local.

Deny by default: a record that the grant does not mark shareable counts as local
(`local_records`), so evidence carried from elsewhere is withheld too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from guards.provenance import Locality, item_provenance

WINDOW = 12
"""Letters and digits in a row that count as a copy: long enough that a word the goal or the grant
shares with a record is not one, short enough that an identifier, a seed or a planted canary is."""
MARKER = "[withheld: local record content]"


@dataclass(frozen=True)
class Taint:
    """What a remote route must not receive, as the set of its `WINDOW`-long letter-and-digit
    runs, and the texts that may be shared whatever a local record says."""

    windows: frozenset[str]
    shared_texts: tuple[str, ...] = ()

    @classmethod
    def of(cls, local: Iterable[str], shared: Iterable[str] = ()) -> Taint:
        return cls(frozenset().union(*(_windows(_folded(text)) for text in local)), tuple(shared))

    @cached_property
    def shared_letters(self) -> str:
        """The shared texts' letters and digits, each text apart (a run never spans two)."""
        return "\x00".join(_folded(text) for text in self.shared_texts)

    @cached_property
    def shared(self) -> frozenset[str]:
        """The runs of what may be shared: a letter inside one of these is never withheld (made
        only when a request holds a tainted run: most hold none)."""
        return frozenset().union(*(_windows(_folded(text)) for text in self.shared_texts))


@dataclass(frozen=True)
class Outbound:
    """A request as it may leave: built only by `gate` (or `recorded`, for the text `gate` gave)."""

    text: str
    locality: Locality
    withheld: int
    """How many spans the gate replaced (0 where the builders withheld everything already)."""


def gate(text: str, locality: Locality, taint: Taint) -> Outbound:
    """`text` with every copy of local content replaced by `MARKER`, for a remote route; a
    local route may see everything the run holds."""
    if locality != "remote" or not taint.windows:
        return Outbound(text, locality, 0)
    spans = _tainted_spans(text, taint)
    if not spans:
        return Outbound(text, locality, 0)
    parts, start = [], 0
    for begin, end in spans:
        parts += [text[start:begin], MARKER]
        start = end
    parts.append(text[start:])
    return Outbound("".join(parts), locality, len(spans))


def recorded(text: str, locality: Locality, withheld: int) -> Outbound:
    """A request the gate let out when it was recorded (the model node sends what `prepare`
    recorded, by its sha256, and the record is the run's own)."""
    return Outbound(text, locality, withheld)


def local_records(records: Mapping[str, Mapping[str, Any]], locality: Locality) -> frozenset[str]:
    """The record ids whose content `locality` may not see: for a remote route, every record not
    marked shareable (`share = "any"`)."""
    if locality != "remote":
        return frozenset()
    return frozenset(rid for rid, record in records.items() if record.get("share") != "any")


def sources_of(grant: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """What a run's evidence may be read from, with each one's `share`: the grant's records, and
    each admitted MCP tool as `mcp:server.tool` (shareable only where its manifest says
    `share = "remote"`; by default its results stay local)."""
    tools = grant.get("mcp_tools") or {}
    return {
        **(grant.get("records") or {}),
        **{
            f"mcp:{name}": {"share": "any" if tool.get("share") == "remote" else "local"}
            for name, tool in tools.items()
        },
    }


def local_sources(item: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The local sources an evidence item was read from, by its provenance (`guards.provenance`): the
    one it carries, else one made from its sources, record and family against `records`; none
    for a person's answer, which is their own words."""
    return sorted(item_provenance(item, records).local)


def item_texts(item: Mapping[str, Any]) -> list[str]:
    """An evidence item's own text: its excerpt lines, summary and error, as read and as a
    post-call hook narrowed them."""
    shown = item.get("shown") or {}
    lines = [*(item.get("excerpt") or ()), *(shown.get("excerpt") or ())]
    texts = [str(line.get("text", "")) for line in lines if isinstance(line, Mapping)]
    about = [item.get("summary"), item.get("error"), shown.get("summary")]
    return [*texts, *(str(text) for text in about if text)]


def _tainted_spans(text: str, taint: Taint) -> list[tuple[int, int]]:
    """The spans of `text` (merged, in order) whose letters lie in a tainted run and in no
    shared one (so a shared goal beside a local line keeps its words). Most requests copy
    nothing: one set intersection says so before any span is looked for."""
    candidates = _windows(_folded(text)) & taint.windows
    if all(window in taint.shared_letters for window in candidates):  # a substring search each
        return []
    letters, where = _letters(text)
    starts = range(len(letters) - WINDOW + 1)
    shared, marked = bytearray(len(letters)), bytearray(len(letters))
    for i in starts:
        if letters[i : i + WINDOW] in taint.shared:
            shared[i : i + WINDOW] = b"\x01" * WINDOW
    for i in starts:
        if letters[i : i + WINDOW] in candidates:
            marked[i : i + WINDOW] = b"\x01" * WINDOW
    spans: list[tuple[int, int]] = []
    for i, flagged in enumerate(marked):
        if not flagged or shared[i]:
            continue
        if spans and i > 0 and marked[i - 1] and not shared[i - 1]:
            spans[-1] = (spans[-1][0], where[i] + 1)
        else:
            spans.append((where[i], where[i] + 1))
    return spans


NOT_ALNUM = re.compile(r"[\W_]+")
ALNUM_RUN = re.compile(r"[^\W_]+")
"""What is not a letter or a digit (`\\w` less the underscore: `str.isalnum`'s letters)."""


def _folded(text: str) -> str:
    """The text's letters and digits, case-folded."""
    return NOT_ALNUM.sub("", text).casefold()


def _letters(text: str) -> tuple[str, list[int]]:
    """The text's letters and digits, case-folded, and where each stands in `text` (a letter
    may fold to two)."""
    letters: list[str] = []
    where: list[int] = []
    for run in ALNUM_RUN.finditer(text):
        folded = run.group().casefold()
        letters.append(folded)
        if len(folded) == run.end() - run.start():
            where.extend(range(run.start(), run.end()))
        else:  # a letter that folds to several: each of them stands where the letter does
            where.extend(
                run.start() + i for i, char in enumerate(run.group()) for _ in char.casefold()
            )
    return "".join(letters), where


def _windows(letters: str) -> set[str]:
    return {letters[i : i + WINDOW] for i in range(len(letters) - WINDOW + 1)}
