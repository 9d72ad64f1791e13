"""`warrant stop` and `warrant correct`: a person ends a run, or corrects it, at its next turn."""

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
from graph.present.escaping import escaped


def register(app: typer.Typer) -> None:
    """`stop` and `correct` on the command line `app`."""
    app.command()(stop)
    app.command()(correct)


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
    from graph.runs.control import stop_run
    from graph.runs.reading import RunError
    from nodes.control import MAX_TEXT, StopRequest

    request = StopRequest(by=person(responder), at=time.time(), reason=reason[:MAX_TEXT])
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


def correct(
    thread_id: ThreadArgument,
    text: Annotated[str, typer.Argument(help="What the run should know, in your words.")],
    responder: Annotated[
        str | None,
        typer.Option("--as", help="Who says it, for the ledger (default: your user name)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Tell a run something it should know ("the failing seed is 4182734, not the latest"): saved
    now, taken in at its next turn as your statement (an H… item the chooser is shown, cited like an
    answer), never as authority: the grant, the budget and the records stay as they are."""
    from graph.runs.control import correct_run
    from graph.runs.reading import RunError
    from nodes.control import Correction

    correction = Correction(by=person(responder), at=time.time(), text=text)
    try:
        number = correct_run(thread_id, chosen_db(db), correction)
    except RunError as exc:
        failed(exc)
    typer.echo(
        f"correction {number} saved for run {escaped(thread_id)}: it takes it in at its next turn"
        f" (a run waiting for a person or cut short: at `warrant resume {escaped(thread_id)}`)"
    )
