"""`warrant stop`: a person ends a run at its next safe point."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from graph.cli.common import (
    DbOption,
    JsonOption,
    QuietOption,
    ThreadArgument,
    chosen_db,
    failed,
    finish,
    person,
    progress,
)
from graph.present.render import escaped
from graph.runs.control import stop as stop_run
from graph.runs.runner import RunError
from nodes.control import StopRequest

MAX_REASON = 2000


def register(app: typer.Typer) -> None:
    """`stop` on the command line `app`."""
    app.command()(stop)


def stop(
    thread_id: ThreadArgument,
    reason: Annotated[str, typer.Option(help="Why, for the handover and the ledger.")] = "",
    responder: Annotated[
        str | None,
        typer.Option("--as", help="Who stops it, for the handover (default: your user name)."),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Stop a run at its next safe point: a call in flight completes and is receipted, nothing
    else is decided; the handover says `stopped`, by whom, when and why. A run waiting for people
    stops at once (what they were asked is withdrawn); one another process is advancing stops
    there, at its next turn."""
    request = StopRequest(by=person(responder), at=time.time(), reason=reason[:MAX_REASON])
    try:
        result = stop_run(thread_id, chosen_db(db), request, progress(quiet, json_output))
    except RunError as exc:
        failed(exc)
    if result.outcome is None:
        typer.echo(
            f"stop recorded: run {escaped(thread_id)} is being advanced by another process and"
            f" stops at its next safe point (`warrant show {escaped(thread_id)}`)"
        )
        return
    finish(result.outcome, json_output)
