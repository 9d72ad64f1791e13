"""An MCP call's arguments, checked against the input schema pinned at admission.

`jsonschema` (Draft 2020-12) never coerces: `"5"` is not an integer, and `True` is not one either
(its type checker keeps booleans apart). A schema a server sent that is not valid JSON Schema, not
self-contained or not linear-time is refused at pin and admission (`tools.mcp.schemas`), so a call
is never checked against nothing; the check itself (`first_schema_error`) never fetches a `$ref`
and runs patterns on RE2.
"""

from __future__ import annotations

from typing import Any

from tools.args import ToolArgs
from tools.storable import unkept

MAX_ARGS_CHARS = 20_000


class McpArgs(ToolArgs):
    """An MCP call's arguments as its pinned schema accepted them (`values`, recorded as given)."""

    values: dict[str, Any]


def checked_args(args: object, schema: dict[str, Any]) -> McpArgs | str:
    """The arguments, or the first reason the schema refuses them (one line)."""
    if not isinstance(args, dict):
        return "arguments must be an object"
    if len(repr(args)) > MAX_ARGS_CHARS:
        return f"arguments longer than {MAX_ARGS_CHARS} characters"
    from tools.mcp.schemas import first_schema_error  # jsonschema: loaded by an MCP call only

    if refused := first_schema_error(args, schema):
        return refused
    if problem := unkept(args, "arguments"):  # sent and recorded as given: no typed form
        return f"{problem}: no store keeps it as given"
    return McpArgs(values=args)
