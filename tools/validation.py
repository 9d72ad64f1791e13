"""One-line descriptions of pydantic validation errors, for refusals and CLI messages."""

from __future__ import annotations

from pydantic import ValidationError


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """Name each failing field and why, on one line (at most `limit` problems)."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(item) for item in error["loc"]) or "value"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)
