"""An MCP call's result as a bounded excerpt: numbered lines, each flagged like any content read
(`tools.excerpt.make_line`: text that reads like instructions is marked, never obeyed)."""

from __future__ import annotations

from tools.excerpt import Excerpt, make_line
from tools.mcp.client import Called

MAX_RESULT_BYTES = 1 << 20
"""Of a result, what is kept at most (its digest covers all the server sent)."""
MAX_LINES = 40
"""Of the lines kept, what an excerpt shows."""


def result_excerpt(name: str, called: Called) -> Excerpt:
    lines = called.text.splitlines()
    shown = tuple(make_line(number, text) for number, text in enumerate(lines[:MAX_LINES], 1))
    notes = [f"{len(lines)} line(s), {called.size} bytes"]
    if called.truncated:
        notes.append(f"cut at {MAX_RESULT_BYTES} bytes")
    if called.is_error:
        notes.append("the server reported the call failed")
    return Excerpt(
        summary=f"{name}: {'; '.join(notes)}",
        lines=shown,
        truncated=called.truncated or len(lines) > MAX_LINES,
    )
