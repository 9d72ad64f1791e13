"""`warrant memory`: a team's notes as history (`nodes/memory.py`) — save, correct, forget, list,
show — each change a receipt with who, when and the version it replaced."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from contract.errors import ErrorKind
from contract.text import USER_NAME
from graph.cli.common import DbOption, JsonOption, cells, chosen_db, fail, print_json

PROJECT_ENV = "WARRANT_PROJECT"
memory_app = typer.Typer(
    help="A team's notes: history a model may be shown, never evidence.", no_args_is_help=True
)

ProjectOption = Annotated[
    str | None,
    typer.Option("--project", help="Whose notes (default: $WARRANT_PROJECT or 'default')."),
]
UserOption = Annotated[
    str | None, typer.Option("--user", help="A user's own notes within the project.")
]
AsOption = Annotated[str | None, typer.Option("--as", help="Who makes the change (default: you).")]
NoteArgument = Annotated[str, typer.Argument(metavar="NOTE", help="A note id (m-…).")]


def register(app: typer.Typer) -> None:
    """`memory …` on the command line `app`."""
    app.add_typer(memory_app, name="memory")


@memory_app.command("save")
def save(
    text: Annotated[str, typer.Argument(help="The note.")],
    signature: Annotated[
        str, typer.Option(help="A failure signature to find it by (e.g. 'RST_CHK clk_en late').")
    ] = "",
    project: ProjectOption = None,
    user: UserOption = None,
    by: AsOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Save a new note (version 1)."""
    from nodes import memory

    note = _apply(
        db,
        project,
        user,
        lambda store, scope: memory.save(store, scope, text, _who(by), time.time(), signature),
    )
    _print_note(note, json_output)


@memory_app.command("correct")
def correct(
    note_id: NoteArgument,
    text: Annotated[str, typer.Argument(help="The corrected note.")],
    project: ProjectOption = None,
    user: UserOption = None,
    by: AsOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Replace a note's text with a new version (the old one stays in its history)."""
    from nodes import memory

    note = _apply(
        db,
        project,
        user,
        lambda store, scope: memory.correct(store, scope, note_id, text, _who(by), time.time()),
    )
    _print_note(note, json_output)


@memory_app.command("forget")
def forget(
    note_id: NoteArgument,
    project: ProjectOption = None,
    user: UserOption = None,
    by: AsOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Forget a note for good: no model is shown it again, and its texts are erased."""
    from nodes import memory

    note = _apply(
        db,
        project,
        user,
        lambda store, scope: memory.forget(store, scope, note_id, _who(by), time.time()),
    )
    _print_note(note, json_output)


@memory_app.command("list")
def list_notes(
    forgotten: Annotated[
        bool, typer.Option("--forgotten", help="Include forgotten notes.")
    ] = False,
    project: ProjectOption = None,
    user: UserOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """List the project's notes."""
    from nodes import memory

    found = _apply(db, project, user, lambda store, scope: memory.notes(store, scope, forgotten))
    _print_notes(found, json_output)


def _print_notes(found: list[dict[str, Any]], json_output: bool) -> None:
    if json_output:
        print_json(found)
        return
    table = Table("note", "version", "state", "by", "signature", "text", box=None, show_edge=False)
    for note in found:
        table.add_row(
            *cells(
                note["id"],
                note["version"],
                note["state"],
                note["by"],
                note["signature"] or "-",
                note["text"] or "(erased)",
            )
        )
    Console(highlight=False, soft_wrap=True).print(table if found else "No notes.")


@memory_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Words every note found holds (text or signature).")],
    limit: Annotated[int, typer.Option(min=1, max=50, help="At most this many notes.")] = 5,
    project: ProjectOption = None,
    user: UserOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """The notes a run's `recall` with this query would find, newest first."""
    from nodes import memory

    found = _apply(
        db, project, user, lambda store, scope: memory.recall(store, [scope], query, limit)
    )
    _print_notes(found, json_output)


@memory_app.command("show")
def show(
    note_id: NoteArgument,
    project: ProjectOption = None,
    user: UserOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show a note's history: every version, who made it, when, and what it replaced."""
    from nodes import memory

    receipts = _apply(db, project, user, lambda store, scope: memory.history(store, scope, note_id))
    if json_output:
        print_json(receipts)
        return
    table = Table("version", "op", "by", "at", "replaced", "text", box=None, show_edge=False)
    for receipt in receipts:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(receipt["at"]))
        table.add_row(
            *cells(
                receipt["version"],
                receipt["op"],
                receipt["by"],
                at,
                (receipt["previous"] or "-")[:12],
                receipt["text"] or "(erased)",
            )
        )
    Console(highlight=False, soft_wrap=True).print(table)


def _apply(
    db: str | None, project: str | None, user: str | None, operation: Callable[..., Any]
) -> Any:
    from ledger.persistence.savers import StorageUnavailable, open_saver
    from nodes import memory

    try:
        scope = memory.Scope(
            project or os.environ.get(PROJECT_ENV) or "default", user or memory.ANYONE
        )
        with open_saver(chosen_db(db)) as storage:
            return operation(storage.store, scope)
    except memory.MemoryError as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    except StorageUnavailable as exc:
        fail(ErrorKind.UNREACHABLE, str(exc))


def _who(by: str | None) -> str:
    from graph.runs.interactions import os_user

    name = by or os_user()
    if not USER_NAME.fullmatch(name):
        fail(ErrorKind.BAD_INPUT, f"--as {name[:40]!r} is not a name (letters, digits, . @ + - _)")
    return name


def _print_note(note: dict[str, Any], json_output: bool) -> None:
    if json_output:
        print_json(note)
    else:
        typer.echo(f"{note['id']} version {note['version']} ({note['state']})")
