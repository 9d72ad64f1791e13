"""`warrant mcp pin`: each listed MCP tool's pin written into its manifest, for its author to review.

The manifest is read and checked as admission reads it, each `[[mcp]]` server's tools are listed,
and each `[[mcp.tool]]`'s `schema_sha256` is set to the digest of what its server shows now; the
file keeps its layout and comments (tomlkit). What a server lists and the manifest does not is
reported, never added: discovered is not visible. A listed tool its server does not offer stops
the pin with nothing written, as does a listed tool whose input schema cannot be pinned (not JSON
Schema, a `$ref` outside it, a pattern RE2 cannot run: `tools.mcp.schemas.schema_problem`).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import tomlkit

from contract.errors import ManifestError
from scenario.mcp import McpServer
from tools.mcp.admission import shown_flags
from tools.mcp.client import McpUnavailable, discover
from tools.mcp.schemas import schema_problem


@dataclass(frozen=True)
class Pinned:
    """What pinning did for one server."""

    server: str
    pinned: tuple[tuple[str, str, str | None], ...]
    """(tool, its digest now, the pin it had) for each listed tool."""
    unlisted: tuple[str, ...]
    """Tools the server offers that the manifest does not list: never shown, never called."""
    flagged: tuple[str, ...] = ()
    """Listed tools whose description or schema reads like instructions to an agent."""


def pin_manifest(path: Path, servers: list[McpServer], timeout_s: float = 30.0) -> list[Pinned]:
    """Write each listed tool's current digest into the manifest at `path` (whose `[[mcp]]` tables,
    validated, are `servers`); raises `ManifestError` (nothing written) for a listed tool its
    server does not offer or whose input schema cannot be pinned, or a server that cannot list
    its tools."""
    if not servers:
        return []
    root = path.resolve().parent
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    tables = document["mcp"]
    report: list[Pinned] = []
    for index, server in enumerate(servers):
        try:
            found = {tool.name: tool for tool in discover(server, root, timeout_s)}
        except McpUnavailable as exc:
            raise ManifestError(f"{path}: {exc}") from None
        pinned, flagged = [], []
        for position, listed in enumerate(server.tool):
            if listed.name not in found:
                offered = ", ".join(sorted(found)) or "none"
                raise ManifestError(
                    f"{path}: server {server.name!r} offers no tool {listed.name!r} (it offers: {offered})"
                )
            if problem := schema_problem(found[listed.name].input_schema):
                raise ManifestError(
                    f"{path}: MCP tool {server.name}.{listed.name}: its input schema {problem}"
                )
            digest = found[listed.name].digest
            tables[index]["tool"][position]["schema_sha256"] = digest
            pinned.append((listed.name, digest, listed.schema_sha256))
            if shown_flags(found[listed.name].description, found[listed.name].input_schema):
                flagged.append(listed.name)
        listed_names = {tool.name for tool in server.tool}
        unlisted = tuple(sorted(name for name in found if name not in listed_names))
        report.append(Pinned(server.name, tuple(pinned), unlisted, tuple(flagged)))
    _replace(path, tomlkit.dumps(document))
    return report


def _replace(path: Path, text: str) -> None:
    """Write `text` over `path` at once (a reader sees the old manifest or the new one)."""
    handle, temporary = tempfile.mkstemp(dir=path.resolve().parent, prefix=".pin-", suffix=".toml")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
