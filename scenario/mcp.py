"""`[[mcp]]` servers and their `[[mcp.tool]]` tables, as a manifest's author writes them; and the
pin of a tool: the sha256 of what a chooser would be shown of it (its description and input
schema), written by `warrant mcp pin` and checked at every admission.

A tool a server lists that the manifest does not is never shown and never called (discovered is not
visible); a listed tool whose description or schema changed since it was pinned (a "rug pull") is
refused at admission, naming both digests. `AdmittedMcpTool` is what admission (`tools/mcp/`)
makes of a listed tool: it stands here, beside the manifest, because the grant holds it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from contract.strict import StrictModel

ServerName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
"""The first half of a tool's name as a chooser gives it (`lint` in `lint.check_file`)."""
ToolName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$")]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Argument = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class McpTool(StrictModel):
    """One `[[mcp.tool]]` table: a tool the chooser may see, pinned."""

    name: ToolName
    schema_sha256: Sha256 | None = None
    """The pin (`schema_digest` of its description and input schema); a tool without one is
    refused at admission."""
    effects: Literal["read", "write"] = "read"
    approval: Literal["none", "human"] = "none"
    """`human`: each call waits for a person (a `write` tool always does)."""
    share: Literal["remote", "local"] = "local"
    """`remote`: its results may be sent to a remote model route; `local` (the default): never."""


class McpServer(StrictModel):
    """One `[[mcp]]` table: a server started beside the manifest (`command`, over stdio) or
    reached at a streamable HTTP `url`."""

    name: ServerName
    command: Annotated[list[Argument], Field(min_length=1, max_length=50)] | None = None
    url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$", max_length=1000)] | None = (
        None
    )
    tool: Annotated[list[McpTool], Field(max_length=100)] = []
    locality: Literal["local", "remote"] | None = None
    """Where the server is: `local` (on this machine's side: it may receive arguments written
    after the run was shown local content) or `remote`. Unsaid: a `command` server, started
    here, is local; a `url` server is remote (`locality_or_default`)."""

    @property
    def locality_or_default(self) -> Literal["local", "remote"]:
        return self.locality or ("local" if self.command is not None else "remote")

    @model_validator(mode="after")
    def _one_transport_and_unique_tools(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"mcp server {self.name!r}: give either command or url")
        names = [tool.name for tool in self.tool]
        if len(names) != len(set(names)):
            raise ValueError(f"mcp server {self.name!r}: a tool is listed twice")
        return self


def schema_digest(description: str, input_schema: Mapping[str, Any]) -> str:
    """The pin of a tool: the sha256 of its description and input schema as canonical JSON."""
    shown = {"description": description, "input_schema": input_schema}
    text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class AdmittedMcpTool(StrictModel):
    """An MCP tool as admitted into a run's grant: what the chooser is shown and the guard checks
    a call against (the pinned description and input schema), and where it is called."""

    server: str
    tool: str
    description: str
    input_schema: dict[str, Any]
    schema_sha256: str
    effects: Literal["read", "write"]
    approval: Literal["none", "human"]
    share: Literal["remote", "local"]
    locality: Literal["local", "remote"] = "remote"
    """Where its server is (`McpServer.locality_or_default`): a remote one never receives
    arguments written after the run was shown local content."""
    flags: list[str] = []
    """What its description or schema reads like (`instruction_like_text`): shown to the chooser
    with the tool; a flag never changes what is permitted."""


def tool_name(server: str, tool: str) -> str:
    """The name a chooser calls an MCP tool by: `server.tool`."""
    return f"{server}.{tool}"
