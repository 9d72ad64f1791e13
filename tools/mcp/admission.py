"""Admission of a manifest's MCP tools: each server's tools listed, each listed tool's pin checked.

Discovered is not visible: only the tools the manifest lists, pinned, and listed by their server
with the same description and input schema are admitted; the rest of what a server offers is never
shown and never called. A listed tool without a pin, one whose description or schema changed since
it was pinned, one its server no longer lists, or one whose schema could not be pinned (not
self-contained, a pattern RE2 cannot run: `tools.mcp.schemas`), is refused at admission in one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scenario.mcp import AdmittedMcpTool, McpServer, McpTool, tool_name
from tools.flags import instruction_flags
from tools.mcp.client import Discovered, McpUnavailable, discover

LIST_S = 30.0
"""How long a server may take to start and list its tools at admission."""


class McpRefused(ValueError):
    """A listed tool that cannot be admitted, in one line naming it."""


def admitted_tools(servers: Sequence[McpServer], root: Path) -> dict[str, AdmittedMcpTool]:
    """Every listed tool of `servers`, checked against what its server lists now; raises
    `McpRefused` (a pin missing or broken, a tool not listed) or `McpUnavailable`."""
    admitted: dict[str, AdmittedMcpTool] = {}
    for server in servers:
        if not server.tool:
            continue
        found = {tool.name: tool for tool in discover(server, root, LIST_S)}
        for listed in server.tool:
            admitted[tool_name(server.name, listed.name)] = _admitted(server, listed, found)
    return admitted


def _admitted(server: McpServer, listed: McpTool, found: dict[str, Discovered]) -> AdmittedMcpTool:
    name = tool_name(server.name, listed.name)
    if listed.schema_sha256 is None:
        raise McpRefused(f"MCP tool {name} has no schema_sha256: pin it with `warrant mcp pin`")
    discovered = found.get(listed.name)
    if discovered is None:
        raise McpRefused(f"MCP tool {name} is not among the tools server {server.name!r} lists")
    from tools.mcp.schemas import schema_problem  # jsonschema: loaded by an MCP tool's admission

    if problem := schema_problem(discovered.input_schema):
        raise McpRefused(f"MCP tool {name}: its input schema {problem}")
    if discovered.digest != listed.schema_sha256:
        raise McpRefused(
            f"MCP tool {name} changed since it was pinned: its description or input schema hashes"
            f" to {discovered.digest}, the manifest pins {listed.schema_sha256}"
        )
    return AdmittedMcpTool(
        server=server.name,
        tool=listed.name,
        description=discovered.description,
        input_schema=discovered.input_schema,
        schema_sha256=discovered.digest,
        effects=listed.effects,
        approval=listed.approval,
        share=listed.share,
        locality=server.locality_or_default,
        flags=list(shown_flags(discovered.description, discovered.input_schema)),
    )


def shown_flags(description: str, input_schema: dict[str, Any]) -> tuple[str, ...]:
    """The flags of what a chooser is shown of a tool: its description, and its schema's text
    (property names and descriptions are read by a model as much as the description is)."""
    return instruction_flags(f"{description}\n{json.dumps(input_schema, ensure_ascii=False)}")


__all__ = ["McpRefused", "McpUnavailable", "admitted_tools"]
