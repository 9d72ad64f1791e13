"""`warrant memory`: a team's notes as history (`nodes/memory.py`) — save, correct, forget, list,
show — each change a receipt with who, when and the version it replaced."""

from __future__ import annotations

import functools
import inspect
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class NoteScope:
    """The options every `memory` command shares: whose notes, in which store, printed how, and
    (a change's) who makes it."""

    project: str | None
    user: str | None
    db: str | None
    json_output: bool
    by: str | None = None


def _option(name: str, annotation: object, default: object = None) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


_WHOSE = [_option("project", ProjectOption), _option("user", UserOption)]
_WHERE = [_option("db", DbOption), _option("json_output", JsonOption, False)]


def _scoped(
    options: list[inspect.Parameter],
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command as typer sees it: its own parameters, then `options`, handed to it as one
    `scope` (typer reads a command's options from its signature, and from nowhere else)."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        own = [parameter for name, parameter in signature.parameters.items() if name != "scope"]

        @functools.wraps(command)
        def with_scope(*args: Any, **given: Any) -> None:
            scope = NoteScope(**{option.name: given.pop(option.name) for option in options})
            command(*args, scope=scope, **given)

        with_scope.__signature__ = inspect.Signature([*own, *options])  # type: ignore[attr-defined]
        return with_scope

    return decorate


_reading = _scoped([*_WHOSE, *_WHERE])
_changing = _scoped([*_WHOSE, _option("by", AsOption), *_WHERE])


def register(app: typer.Typer) -> None:
    """`memory …` on the command line `app`."""
    app.add_typer(memory_app, name="memory")


@memory_app.command("save")
@_changing
def save(
    text: Annotated[str, typer.Argument(help="The note.")],
    scope: NoteScope,
    signature: Annotated[
        str, typer.Option(help="A failure signature to find it by (e.g. 'RST_CHK clk_en late').")
    ] = "",
) -> None:
    """Save a new note (version 1)."""
    from nodes import memory

    _change(
        scope,
        lambda store, at: memory.save(store, at, text, _who(scope.by), time.time(), signature),
    )


@memory_app.command("correct")
@_changing
def correct(
    note_id: NoteArgument,
    text: Annotated[str, typer.Argument(help="The corrected note.")],
    scope: NoteScope,
) -> None:
    """Replace a note's text with a new version (the old one stays in its history)."""
    from nodes import memory

    _change(
        scope,
        lambda store, at: memory.correct(store, at, note_id, text, _who(scope.by), time.time()),
    )


@memory_app.command("forget")
@_changing
def forget(note_id: NoteArgument, scope: NoteScope) -> None:
    """Forget a note for good: no model is shown it again, and its texts are erased."""
    from nodes import memory

    _change(scope, lambda store, at: memory.forget(store, at, note_id, _who(scope.by), time.time()))


@memory_app.command("list")
@_reading
def list_notes(
    scope: NoteScope,
    forgotten: Annotated[
        bool, typer.Option("--forgotten", help="Include forgotten notes.")
    ] = False,
) -> None:
    """List the project's notes."""
    from nodes import memory

    _print_notes(_apply(scope, lambda store, at: memory.notes(store, at, forgotten)), scope)


def _print_notes(found: list[dict[str, Any]], scope: NoteScope) -> None:
    if scope.json_output:
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
@_reading
def search(
    query: Annotated[str, typer.Argument(help="Words every note found holds (text or signature).")],
    scope: NoteScope,
    limit: Annotated[int, typer.Option(min=1, max=50, help="At most this many notes.")] = 5,
) -> None:
    """The notes a run's `recall` with this query would find, newest first."""
    from nodes import memory

    _print_notes(_apply(scope, lambda store, at: memory.recall(store, [at], query, limit)), scope)


@memory_app.command("show")
@_reading
def show(note_id: NoteArgument, scope: NoteScope) -> None:
    """Show a note's history: every version, who made it, when, and what it replaced."""
    from nodes import memory

    receipts = _apply(scope, lambda store, at: memory.history(store, at, note_id))
    if scope.json_output:
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


def _apply(scope: NoteScope, operation: Callable[..., Any]) -> Any:
    """`operation(store, memory scope)` on the notes `scope` names; its refusals are one line."""
    from ledger.persistence.savers import StorageUnavailable, open_saver
    from nodes import memory

    try:
        at = memory.Scope(
            scope.project or os.environ.get(PROJECT_ENV) or "default", scope.user or memory.ANYONE
        )
        with open_saver(chosen_db(scope.db)) as storage:
            return operation(storage.store, at)
    except memory.NoteError as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    except StorageUnavailable as exc:
        fail(ErrorKind.UNREACHABLE, str(exc))


def _change(scope: NoteScope, operation: Callable[..., Any]) -> None:
    """Make the change `operation` makes, and print the note it leaves."""
    note = _apply(scope, operation)
    if scope.json_output:
        print_json(note)
    else:
        typer.echo(f"{note['id']} version {note['version']} ({note['state']})")


def _who(by: str | None) -> str:
    from graph.runs.interactions import os_user

    name = by or os_user()
    if not USER_NAME.fullmatch(name):
        fail(ErrorKind.BAD_INPUT, f"--as {name[:40]!r} is not a name (letters, digits, . @ + - _)")
    return name
