"""The commands people answer runs with: `resume`, `inbox` (and its web page), `continue`."""

from __future__ import annotations

import json
import shutil
import textwrap
import time
from typing import Annotated, Any

import typer

from contract.codes import InteractionKind
from contract.errors import ErrorKind
from graph.cli.common import (
    DbOption,
    JsonOption,
    QuietOption,
    RecordOption,
    ThreadArgument,
    check_record_path,
    chosen_db,
    fail,
    failed,
    finish,
    one_line_failures,
    person,
    print_json,
    progress,
    record_cassette,
    started,
)
from graph.cli.web import serve_web
from graph.present.escaping import escaped
from guards.finalize import ended_as
from ledger.persistence.locations import shown_db


def register(app: typer.Typer) -> None:
    """`continue`, `resume` and `inbox` on the command line `app`."""
    app.command("continue")(continue_run)
    app.command()(resume)
    app.command()(inbox)


def continue_run(
    parent: ThreadArgument,
    goal: Annotated[
        str | None, typer.Option(help="The new run's goal (default: the parent's).")
    ] = None,
    chooser: Annotated[
        str | None, typer.Option(help="The new run's chooser (default: the parent's).")
    ] = None,
    db: DbOption = None,
    thread: Annotated[
        str | None, typer.Option(help="Thread id for the new run (default: generated).")
    ] = None,
    message_id: Annotated[
        str | None, typer.Option(help="Idempotency key: a retry finds the same continuation.")
    ] = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Start a new run from a finished one: its evidence carried, nothing run again."""
    from graph.runs.requests import continuation

    result = started(
        lambda: continuation(parent, chosen_db(db), goal, chooser, thread, message_id),
        db,
        message_id,
        quiet,
        json_output,
    )
    finish(result, json_output)


def resume(
    thread_id: ThreadArgument,
    answer: Annotated[str | None, typer.Option(help="Answer the pending question.")] = None,
    approve: Annotated[bool, typer.Option("--approve", help="Approve the pending call.")] = False,
    reject: Annotated[
        bool, typer.Option("--reject", help="Reject the pending call; it never runs.")
    ] = False,
    edit: Annotated[
        str | None,
        typer.Option(help="Approve the pending call with these arguments (JSON), checked again."),
    ] = None,
    interaction: Annotated[
        str | None,
        typer.Option(help="The interaction the reply is for (when several are pending)."),
    ] = None,
    responder: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Who replies, for the ledger and the scenario's approvers (default: your user name).",
        ),
    ] = None,
    db: DbOption = None,
    record: RecordOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Continue a run: after a crash or a lost connection, or with a person's reply."""
    from graph.delivery.artifacts import deliver
    from graph.people.waiting import save_answer
    from graph.runs.interactions import reply_from_options
    from graph.runs.runner import resume as resume_run

    replying = (
        answer is not None or approve or reject or edit is not None or interaction is not None
    )
    by = person(responder)
    reply = (
        (lambda kind: {**reply_from_options(kind, answer, approve, reject, edit), "by": by})
        if replying
        else None
    )
    with one_line_failures():
        if record is not None:
            check_record_path(record)
        if reply is not None and interaction is not None:
            saved = save_answer(thread_id, chosen_db(db), interaction, reply, time.time())
            if saved is not None:  # an open question: the run adopts the answer at its next turn
                typer.echo(saved_line(thread_id, chosen_db(db), interaction))
                return
        if reply is not None and (ended := finished_as(thread_id, chosen_db(db))):
            fail(
                ErrorKind.REPLY_REFUSED,
                not_recorded(thread_id, chosen_db(db), ended, answer is not None),
            )
        result = resume_run(
            thread_id,
            chosen_db(db),
            progress(quiet, json_output),
            reply,
            interaction,
            lane_calls=record is not None,
            on_end=deliver,
        )
    record_cassette(record, result)
    finish(result, json_output)


def finished_as(thread_id: str, db: str) -> str | None:
    """How a run that has ended (its handover written, nothing pending) ended, else None: a reply
    to it is taken in by no turn of its own."""
    from graph.runs.reading import stored_run

    result = stored_run(db, thread_id)
    if "handover" not in result.values or result.pending:
        return None
    return ended_as(result.values["handover"]) or "ended"


def saved_line(thread_id: str, db: str, interaction: str) -> str:
    """What became of an answer saved for an open question: the run takes it in, or, once it
    has ended, only a continuation does (a late answer)."""
    saved = f"reply saved for {escaped(interaction)}"
    if (ended := finished_as(thread_id, db)) is None:
        return f"{saved}; the run takes it in at its next turn"
    thread = escaped(thread_id)
    return f"{saved}, but run {thread!r} has finished ({ended}): no turn of it will take it in; `warrant continue {thread}` starts a run that does"


def not_recorded(thread_id: str, db: str, ended: str, answering: bool) -> str:
    """One line for a reply to a run that has ended: nothing was recorded, and how an answer to
    a question it left open can still be kept for a continuation."""
    from graph.people.waiting import open_questions

    thread = escaped(thread_id)
    line = (
        f"run {thread!r} has finished ({ended}): nothing waits for a reply and it was not recorded"
    )
    left = open_questions(db, thread_id) if answering else []
    if left:
        ids = ", ".join(escaped(question["interaction_id"]) for question in left)
        line += f"; to keep an answer for `warrant continue {thread}`, name the open question with --interaction ({ids})"
    return line


def serve_inbox(db: str, responder: str | None, port: int | None) -> None:
    """`warrant web` for its operator alone (`graph/web/`), signing as `responder` (else the OS
    user); on a random free port unless `port` is given."""
    from graph.web.gate import Person

    serve_web(db, (Person(person(responder), "operator"),), port)


def inbox(
    db: DbOption = None,
    json_output: JsonOption = False,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve", help="Serve the inbox as a web page on 127.0.0.1 to answer from a browser."
        ),
    ] = False,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", min=1, max=65535, help="The web inbox's port (default: a random free one)."
        ),
    ] = None,
    responder: Annotated[
        str | None,
        typer.Option(
            "--as", help="Who the web inbox's replies are signed by (default: your user name)."
        ),
    ] = None,
) -> None:
    """List the interactions waiting for a person, across runs."""
    from graph.people.waiting import waiting
    from graph.runs.reading import RunError

    if serve:
        serve_inbox(chosen_db(db), responder, port)
        return
    try:
        rows = waiting(chosen_db(db), time.time())
    except RunError as exc:
        failed(exc)
    if json_output:
        print_json(rows)
        return
    width = shutil.get_terminal_size().columns
    entries = ["\n".join(wrapped(line, width) for line in inbox_entry(row)) for row in rows]
    db_shown = shown_db(chosen_db(db))
    typer.echo("\n\n".join(entries) if rows else f"Nothing is waiting for a person in {db_shown}.")


def inbox_entry(row: dict[str, Any]) -> list[tuple[int, str]]:
    """One waiting interaction as indented lines: where it waits, then what is asked; a call's
    arguments one a line, each in full (an approver decides on what they read, so nothing is
    cut to fit a column)."""
    interaction = row["interaction"]
    child = f"child {interaction['lane']} of " if interaction.get("lane") else ""
    heading = f"{row['interaction_id']} · {row['scenario']} · {child}thread {row['thread']} · turn {row['turn']} · waiting {row['age_s']:.0f}s"
    if row["kind"] != InteractionKind.APPROVAL:
        return [(0, heading), (2, row["summary"])]
    call = interaction["call"]
    asked = f"approve call {call['id']} {call['name']} on {', '.join(interaction['records'])}?"
    args = [
        (4, f"- {name}: {json.dumps(value, ensure_ascii=False)}")
        for name, value in call["args"].items()
    ]
    return [(0, heading), (2, asked), *args]


def wrapped(line: tuple[int, str], width: int) -> str:
    """A line escaped for the terminal and wrapped to `width`, its indent kept: a word longer
    than a line is broken across lines, never cut."""
    indent, text = line
    return textwrap.fill(
        escaped(text),
        max(width, indent + 20),
        initial_indent=" " * indent,
        subsequent_indent=" " * (indent + 4),
        break_on_hyphens=False,
    )
