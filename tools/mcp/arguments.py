"""An MCP call's arguments, checked against the input schema pinned at admission.

`jsonschema` (Draft 2020-12) never coerces: `"5"` is not an integer, and `True` is not one either
(its type checker keeps booleans apart). A schema a server sent that is not valid JSON Schema is
refused at admission (`check_schema`), so a call is never checked against nothing.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import ConfigDict

from tools.args import ToolArgs
from tools.storable import unkept

MAX_ARGS_CHARS = 20_000


class McpArgs(ToolArgs):
    """An MCP call's arguments as its pinned schema accepted them (`values`, recorded as given)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    values: dict[str, Any]


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a usable JSON Schema, or None."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message[:300]
    return None


def checked_args(args: object, schema: dict[str, Any]) -> McpArgs | str:
    """The arguments, or the first reason the schema refuses them (one line)."""
    if not isinstance(args, dict):
        return "arguments must be an object"
    if len(repr(args)) > MAX_ARGS_CHARS:
        return f"arguments longer than {MAX_ARGS_CHARS} characters"
    errors = sorted(Draft202012Validator(schema).iter_errors(args), key=lambda error: error.path)
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.absolute_path) or "arguments"
        return f"{where}: {first.message[:300]}"
    if problem := unkept(args, "arguments"):  # sent and recorded as given: no typed form
        return f"{problem}: no store keeps it as given"
    return McpArgs(values=args)
