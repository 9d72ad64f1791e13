"""One-line descriptions of pydantic validation errors, for refusals and CLI messages."""

from __future__ import annotations

import re

from pydantic import ValidationError

_PLAIN = re.compile(r"^[A-Za-z0-9_]{1,40}$")


def storable_text(text: str) -> str:
    """The text with each lone surrogate (from a JSON `\\ud800` escape, or `surrogateescape`) and
    each NUL written as its escape: checkpoints, cassettes and the server's JSON take UTF-8 only,
    and no PostgreSQL text or JSON value holds a NUL."""
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def one_line(text: str, width: int = 300) -> str:
    """Printable characters only, clipped: refusal details may quote hostile input."""
    printable = "".join(char if char.isprintable() else "?" for char in text)
    return printable if len(printable) <= width else printable[: width - 1] + "…"


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """Name each failing field and why, on one line (at most `limit` problems)."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(_location(item) for item in error["loc"]) or "value"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more")
    return one_line("; ".join(parts))


def _location(item: str | int) -> str:
    text = str(item)
    return text if _PLAIN.match(text) else repr(text[:40])


USER_NAME = re.compile(r"[\w.@+-]{1,100}")
"""A person's name as replies, ledgers and a scenario's `approvers` carry it."""
