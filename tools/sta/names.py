"""Names in a timing report as its bytes: endpoints and their pins, read alike by the line
parser (`tools.sta.report`) and the scan (`tools.sta.scan`)."""

from __future__ import annotations

from typing import overload

ARRIVAL = b"data arrival time"
ARRIVAL_TEXT = ARRIVAL.decode()
"""The line below the one that names the endpoint's pin: the first in a path that names it."""


def endpoint_pin(row: bytes, endpoint: bytes) -> bytes:
    """The pin the row above a path's first `data arrival time` names for its endpoint (`reg3/D`
    for `Endpoint: reg3`), or the endpoint itself if that row names none: OpenSTA and PrimeTime
    name the instance on `Endpoint:`, and two pins of one instance are two endpoints."""
    prefix = endpoint + b"/"
    if prefix not in row:  # the common case, in one search
        return endpoint
    for token in row.split():
        if token.startswith(prefix) and b"/" not in token[len(prefix) :]:
            return token
    return endpoint


@overload
def encoded(text: str) -> bytes: ...
@overload
def encoded(text: None) -> None: ...
def encoded(text: str | None) -> bytes | None:
    """A field as the report's bytes (the line parser decodes them with surrogateescape)."""
    return None if text is None else text.encode("utf-8", "surrogateescape")


def decoded(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def point(rest: str) -> tuple[str, str | None]:
    """`name (reason)` → (name, reason); a name whose reason wrapped to the next line → (name, None)."""
    rest = rest.strip()
    if rest.endswith(")") and " (" in rest:
        name, _, reason = rest.rpartition(" (")
        return name.strip(), reason[:-1]
    return rest, None
