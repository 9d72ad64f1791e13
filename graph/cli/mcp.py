"""`warrant mcp`: the MCP servers a scenario's tools come from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from graph.cli.common import fail
from graph.errors import ErrorKind
from tools.errors import ManifestError
from tools.mcp.pinning import pin_manifest
from tools.records.registry import load_scenario

mcp_app = typer.Typer(
    help="MCP servers and the tools of theirs a scenario may use.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """`mcp pin` on the command line `app`."""
    app.add_typer(mcp_app, name="mcp")


@mcp_app.command("pin")
def pin(
    manifest: Annotated[Path, typer.Argument(help="The scenario's manifest file.")],
) -> None:
    """Connect to each \\[\\[mcp]] server of MANIFEST, list its tools, and write each listed
    tool's schema_sha256 (the digest of its description and input schema) for you to review:
    admission refuses a listed tool whose server shows anything else. Tools a server offers that
    the manifest does not list are reported, never added."""
    if not manifest.is_file():
        fail(ErrorKind.BAD_INPUT, f"{manifest} is not a manifest file")
    try:
        scenario = load_scenario(manifest)
        if not scenario.mcp:
            fail(ErrorKind.BAD_INPUT, f"{manifest} names no [[mcp]] server")
        report = pin_manifest(manifest, list(scenario.mcp))
    except ManifestError as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    for server in report:
        for tool, digest, before in server.pinned:
            change = (
                "pinned"
                if before is None
                else "unchanged"
                if before == digest
                else f"CHANGED from {before[:12]}… (review the tool before you run)"
            )
            typer.echo(f"{server.server}.{tool}  {digest[:12]}…  {change}")
        if server.unlisted:
            typer.echo(
                f"{server.server}: offered, not listed (never shown, never called): "
                + ", ".join(server.unlisted)
            )
