"""What every `warrant` command shares: the app, its options, one-line failures, output."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import Progress, TaskID
from rich.text import Text

from contract.errors import ErrorKind, WarrantError
from contract.text import USER_NAME
from graph.present.escaping import escaped
from ledger.persistence.locations import (
    checked_db,
    default_db,
    missing_folder,
    project_store,
    shown_db,
    user_store,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from graph.runs.reading import RunResult
    from graph.runs.requests import RunRequest
    from scenario.registry import Scenario


app = typer.Typer(
    help="Warrant: a governed evidence agent. The chooser proposes; the guard authorizes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="memory, a SQLite file, or postgresql://… (default: $WARRANT_DB, else the nearest .warrant/ folder upward, else your user store: see `warrant --help`)",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No per-turn progress on stderr.")]
ThreadArgument = Annotated[str, typer.Argument(metavar="THREAD")]


EXIT_CODES: dict[ErrorKind, int] = {
    ErrorKind.BROKEN_LEDGER: 1,
    ErrorKind.BAD_INPUT: 2,
    ErrorKind.NOT_FOUND: 2,
    ErrorKind.CONFLICT: 2,
    ErrorKind.BUSY: 2,
    ErrorKind.REPLY_REFUSED: 2,
    ErrorKind.UNREACHABLE: 4,
}
"""The exit code of each kind of failure, the only place one is chosen (docs/cli.md): 1 a ledger
that does not hold, 2 bad input or a conflict (nothing started), 4 storage, the chooser or an
endpoint unreachable (the run can be resumed). 3, waiting for a person, is no failure (`finish`)."""


def fail(kind: ErrorKind, message: str) -> NoReturn:
    """One line on stderr, and the exit code of its kind."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(EXIT_CODES[kind])


def failed(error: WarrantError) -> NoReturn:
    """A library's failure (`RunError`, `ServeError`, …) as the command's one line and exit code."""
    fail(error.kind, str(error))


def chosen_db(db: str | None) -> str:
    """The `--db` given, else `$WARRANT_DB` or the default store: a value that names no store is
    bad input (exit 2); a SQLite file given in a missing folder is unreachable (exit 4); the
    default store's folder is made when first used."""
    given = db or os.environ.get("WARRANT_DB")
    try:
        chosen = checked_db(given or default_db())
    except ValueError as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    if given and (unreachable := missing_folder(chosen)):
        fail(ErrorKind.UNREACHABLE, unreachable)
    return chosen


def where_runs_are_kept() -> str:
    """The paragraph of `warrant --help` that says which store is the default here, and why."""
    project = project_store()
    here = (
        f"the project's store {shown_db(str(project))}"
        if project
        else f"your user store {shown_db(str(user_store()))} (no .warrant/ folder in this folder or above)"
    )
    if named := os.environ.get("WARRANT_DB"):
        here = f"$WARRANT_DB, {shown_db(named)}"
    return (
        "Where runs are kept: --db or $WARRANT_DB; else the nearest .warrant/ folder found from"
        " the current folder upward, as git finds .git (a project's store: `mkdir .warrant` at"
        " its root); else your user store, one per user ($XDG_DATA_HOME/warrant/warrant.sqlite)."
        f" A new store is never made in the current folder. Here: {here}."
    )


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def cells(*values: object) -> list[Text]:
    """Table cells as plain text: no rich markup is read from data, no control character shown."""
    return [Text(escaped(str(value))) for value in values]


def progress(quiet: bool, json_output: bool = False) -> Any:
    """What the console shows of a run as it goes: a line per ledger entry, and a long family
    call's progress (a bar on a terminal, a line each quarter otherwise; nothing with `--json`)."""
    from graph.present.render import event_summary
    from graph.runs.runner import PROGRESS

    reading = ReadingBar()

    def show(event: dict[str, Any]) -> None:
        if quiet:
            return
        if event["type"] == PROGRESS:
            if not json_output:
                reading.show(event["payload"])
            return
        lane = f"{event['lane']:>6} " if event.get("lane") else ""
        line = Text.assemble(
            (lane, "cyan"), (f"turn {event['turn']}", "dim"), f" {event['type']:<9} "
        )
        stderr.print(line.append(event_summary(event)))

    return show


@dataclass
class ReadingBar:
    """A family call's progress on stderr: rich's bar on a terminal (gone when the call is done),
    else a line at each quarter."""

    bar: Progress | None = None
    task: TaskID | None = None
    quarter: int = -1

    def show(self, told: dict[str, Any]) -> None:
        done, total = int(told["done"]), int(told["total"])
        what = f"turn {told['turn']} reading   {told['call_id']} {told['tool']} → {told['ref']}"
        if not stderr.is_terminal:
            quarter = done * 4 // max(total, 1)
            if quarter != self.quarter:
                self.quarter = quarter
                stderr.print(f"{what} · {done}/{total} members", style="dim")
            return
        if self.bar is None or self.task is None:
            self.bar = Progress(*Progress.get_default_columns(), console=stderr, transient=True)
            self.task = self.bar.add_task(escaped(what), total=total)
            self.bar.start()
        self.bar.update(self.task, completed=done)
        if done >= total:
            self.bar.stop()
            self.bar = self.task = None


def finish(outcome: RunResult, json_output: bool, waiting_code: int = 3) -> None:
    """Print the handover; a run waiting for a person prints the handover so far and exits 3."""
    from graph.present.render import handover_markdown

    handover = outcome.handover
    if json_output:
        print_json(handover)
    else:
        sys.stdout.write(handover_markdown(handover))
    if outcome.pending:
        raise typer.Exit(waiting_code)


def started(
    build: Callable[[], RunRequest],
    db: str | None,
    message_id: str | None,
    quiet: bool,
    json_output: bool,
    record: Path | None = None,
) -> RunResult:
    """The outcome of the new run `build` asks for (`run`, `continue`), its message id and cassette
    path checked first; bad input or an unreachable store is one line and its exit code."""
    from graph.delivery.artifacts import deliver
    from graph.runs.identity import check_message_id
    from graph.runs.runner import start

    with one_line_failures():
        if message_id is not None:
            check_message_id(message_id)
        if record is not None:
            check_record_path(record)
        return start(
            build(),
            chosen_db(db),
            progress(quiet, json_output),
            lane_calls=record is not None,
            on_end=deliver,
        )


@contextmanager
def one_line_failures() -> Iterator[None]:
    """Bad input (a `ValueError`) or a run that cannot go on (a `RunError`) raised inside: one
    line on stderr and the exit code of its kind, never a traceback."""
    from graph.runs.reading import RunError

    try:
        yield
    except ValueError as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    except RunError as exc:
        failed(exc)


def stored_result(thread_id: str, db: str | None) -> RunResult:
    from graph.runs.reading import RunError, stored_run

    try:
        return stored_run(chosen_db(db), thread_id)
    except RunError as exc:
        failed(exc)


RecordOption = Annotated[
    Path | None,
    typer.Option(help="Write the run's model attempts to this JSONL cassette (for replay:PATH)."),
]


def check_record_path(path: Path) -> None:
    """A cassette path is checked before the run: it is written after the run's end, when a
    folder, a FIFO or a link there would fail or be followed with the run's work already done."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ValueError(f"--record {path}: not a regular file (a folder, a link or a device)")
    if not path.parent.is_dir():
        raise ValueError(f"--record {path}: the folder {path.parent} does not exist")


def record_cassette(path: Path | None, result: RunResult) -> None:
    """Every model attempt of the run so far (its children's with their lanes), as a cassette:
    after a resume too, so a run that waited for a person is recorded whole."""
    from nodes.choosers.cassette import write_cassette

    if path is not None:
        write_cassette(path, result.values.get("model_calls", []), result.lane_calls)


def person(given: str | None, option: str = "--as") -> str:
    """Who acts (`--as`, else the OS user), or who is named (`option`), checked as a user name;
    bad input otherwise."""
    from graph.runs.interactions import os_user

    by = given or os_user()
    if not USER_NAME.fullmatch(by):
        fail(
            ErrorKind.BAD_INPUT,
            f"{option} {escaped(by)!r} is not a user name (letters, digits and _.@+- only, at most 100)",
        )
    return by


def revision_of(thread_id: str, revision: int, db: str | None) -> str:
    """The thread whose handover is revision `revision` of the report `thread_id` belongs to."""
    from graph.build import store_of
    from graph.runs.reading import RunError, reading_graph
    from nodes.continuation import revision_thread

    values = stored_result(thread_id, db).values
    report = values.get("report") or thread_id
    try:
        with reading_graph(chosen_db(db)) as graph:
            found = revision_thread(store_of(graph), report, revision)
    except RunError as exc:
        failed(exc)
    if found is None:
        fail(ErrorKind.NOT_FOUND, f"report {escaped(report)!r} has no revision {revision}")
    return found


def drafted(
    folder: Path,
    target: Path,
    scenario_id: str,
    check: Callable[[str, list[str]], None] | None = None,
) -> tuple[Scenario, list[str]]:
    """The folder's draft manifest (`check`ed) admitted and written to `target`, with what it left
    out; a folder that cannot be drafted, or a draft admission refuses, is one line of bad input."""
    from scenario.draft import admitted_draft, draft_manifest

    try:
        text, left_out = draft_manifest(folder, scenario_id)
        if check is not None:
            check(text, left_out)
        return admitted_draft(target, text), left_out
    except (ValueError, OSError) as exc:
        fail(ErrorKind.BAD_INPUT, str(exc).splitlines()[0])
