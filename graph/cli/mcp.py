"""`warrant mcp`: the MCP servers a scenario's tools come from."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contract.errors import ErrorKind, ManifestError
from graph.cli.common import DbOption, QuietOption, chosen_db, fail, failed, progress
from guards.provenance import Locality

if TYPE_CHECKING:
    from graph.mcp.session import SessionRun


mcp_app = typer.Typer(
    help="MCP servers and the tools of theirs a scenario may use.", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """`mcp pin` and `mcp serve` on the command line `app`."""
    app.add_typer(mcp_app, name="mcp")


@mcp_app.command("pin")
def pin(
    manifest: Annotated[Path, typer.Argument(help="The scenario's manifest file.")],
) -> None:
    """Connect to each \\[\\[mcp]] server of MANIFEST, list its tools, and write each listed
    tool's schema_sha256 (the digest of its description and input schema) for you to review:
    admission refuses a listed tool whose server shows anything else. A schema with a $ref outside
    it or a pattern RE2 cannot run is not pinned (exit 2, nothing written). Tools a server offers
    that the manifest does not list are reported, never added."""
    from scenario.registry import load_scenario
    from tools.mcp.pinning import pin_manifest

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
        for tool in server.flagged:
            typer.echo(
                f"{server.server}.{tool}: its description or schema reads like instructions to an"
                " agent; review it before you run (the chooser is shown it flagged)"
            )
        if server.unlisted:
            typer.echo(
                f"{server.server}: offered, not listed (never shown, never called): "
                + ", ".join(server.unlisted)
            )


TOKEN = "WARRANT_MCP_TOKEN"


@mcp_app.command("serve")
def serve(
    scenario: Annotated[
        str, typer.Argument(help="A built-in scenario id (R42, …) or a manifest path.")
    ],
    http: Annotated[
        int | None,
        typer.Option(
            "--http",
            min=1,
            max=65535,
            metavar="PORT",
            help="Serve streamable HTTP at http://127.0.0.1:PORT/mcp (bearer token:"
            f" ${TOKEN}, else one printed at start); default: stdio.",
        ),
    ] = None,
    goal: Annotated[str | None, typer.Option(help="Replace the scenario's goal.")] = None,
    client_locality: Annotated[
        Locality,
        typer.Option(
            "--client-locality",
            help="Where the clients are: remote (the default: an IDE agent may be backed by a"
            " hosted model) is answered nothing read from a share = local record; local: on this"
            " machine's side, answered everything.",
        ),
    ] = "remote",
    db: DbOption = None,
    quiet: QuietOption = False,
) -> None:
    """Serve SCENARIO's governed tools to MCP clients: each session is a run of SCENARIO (its
    grant, budgets and ledger) whose chooser is the client; every call passes the guard, a refusal
    comes back as a tool error with its code and owner; the session's end writes the run's
    handover (`warrant show THREAD`)."""
    from graph.mcp.server import GovernedServer, quiet_sdk_logs, serve_http, serve_stdio, told
    from graph.mcp.session import SessionRun
    from graph.runs.reading import RunError
    from graph.runs.requests import admit_request
    from nodes.choosers.client import MCP_CLIENT

    store = chosen_db(db)
    try:
        admit_request(scenario, goal, MCP_CLIENT, None, None)  # refuse a bad scenario now, once
    except RunError as exc:
        failed(exc)
    on_event = progress(quiet)

    def open_session() -> SessionRun:
        request = admit_request(scenario, goal, MCP_CLIENT, None, None)
        told(f"session run {request.thread_id}: `warrant show {request.thread_id}` after it ends")
        return SessionRun(request, store, on_event, client_locality)

    quiet_sdk_logs()
    server = GovernedServer("warrant", open_session)
    if http is None:
        import anyio

        anyio.run(serve_stdio, server)
        return
    token = os.environ.get(TOKEN) or secrets.token_urlsafe(32)
    told(f"serving http://127.0.0.1:{http}/mcp")
    if TOKEN not in os.environ:
        told(f"bearer token: {token}")
    serve_http(server, http, token)
