"""`warrant schedule add|list|remove` and `warrant worker`: recurring work a person confirmed,
each occurrence a new run (`graph.runs.schedules`)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from contract.errors import ErrorKind
from graph.cli.common import (
    DbOption,
    JsonOption,
    QuietOption,
    cells,
    chosen_db,
    fail,
    failed,
    one_line_failures,
    person,
    print_json,
    progress,
)
from graph.present.escaping import escaped

if TYPE_CHECKING:
    from graph.runs.schedules import Occurrence, Schedule


schedule_app = typer.Typer(
    help="Recurring work you confirm: each occurrence a new run, run by `warrant worker`.",
    no_args_is_help=True,
)
AsOption = Annotated[
    str | None, typer.Option("--as", help="Who confirms, for the record (default: your user name).")
]
NowOption = Annotated[
    str | None,
    typer.Option(
        "--now",
        help="Act as if it were this time (ISO 8601 with an offset), to catch up or rehearse.",
    ),
]


def register(app: typer.Typer) -> None:
    """`schedule …` and `worker` on the command line `app`."""
    app.add_typer(schedule_app, name="schedule")
    app.command()(worker)


@schedule_app.command("add")
def add(
    scenario: Annotated[str, typer.Argument(help="A built-in scenario id or a manifest path.")],
    cron: Annotated[
        str, typer.Option(help='When, as cron fields "m h dom mon dow" (e.g. "0 6 * * 1-5").')
    ],
    goal: Annotated[str | None, typer.Option(help="Replace the scenario's goal.")] = None,
    tz: Annotated[str, typer.Option(help="The cron's time zone (e.g. Europe/Berlin).")] = "UTC",
    chooser: Annotated[str, typer.Option(help="As `warrant run --chooser`.")] = "scripted",
    responder: AsOption = None,
    now: NowOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Confirm a schedule: the scenario as it is now (its manifest's sha256), run at each
    occurrence as a new run with a fresh budget that waits for nobody. A changed manifest is not
    run until confirmed again."""
    from graph.runs.schedules import confirm, next_occurrence

    by = person(responder)
    at = _as_of(now) or datetime.now(UTC)
    with one_line_failures():
        schedule = confirm(chosen_db(db), scenario, cron, tz, goal, chooser, by, at.timestamp())
    upcoming = next_occurrence(schedule, at).isoformat()
    if json_output:
        print_json(schedule | {"next": upcoming})
        return
    typer.echo(
        f"schedule {schedule['id']} confirmed by {escaped(by)}: {escaped(schedule['scenario'])}"
        f" at {escaped(cron)!r} ({tz}), manifest sha256 {schedule['manifest_sha256'][:12]}…;"
        f" next occurrence {upcoming}. `warrant worker` runs it."
    )


@schedule_app.command("list")
def list_schedules(db: DbOption = None, json_output: JsonOption = False) -> None:
    """The schedules, their next occurrence and what became of the last one."""
    from graph.runs.reading import RunError
    from graph.runs.schedules import schedules

    try:
        found = schedules(chosen_db(db))
    except RunError as exc:
        failed(exc)
    now = datetime.now(UTC)
    if json_output:
        print_json(
            [
                schedule | {"next": _next(schedule, last, now), "last": last}
                for schedule, last in found
            ]
        )
        return
    if not found:
        typer.echo("No schedules. `warrant schedule add SCENARIO --cron …` confirms one.")
        return
    table = Table("id", "scenario", "when", "next", "last", "by", box=None, show_edge=False)
    for schedule, last in found:
        table.add_row(
            *cells(
                schedule["id"],
                schedule["scenario"],
                f"{schedule['cron']} {schedule['tz']}",
                _next(schedule, last, now),
                f"{last['outcome']} {last['occurrence']}" if last else "none yet",
                schedule["confirmed_by"],
            )
        )
    Console(highlight=False, soft_wrap=True, width=max(Console().width, 140)).print(table)


@schedule_app.command("remove")
def remove_schedule(
    schedule_id: Annotated[str, typer.Argument(metavar="ID")],
    responder: AsOption = None,
    db: DbOption = None,
) -> None:
    """Stop a schedule: no more occurrences; it and its occurrences' records are kept."""
    from graph.runs.reading import RunError
    from graph.runs.schedules import remove

    by = person(responder)
    try:
        remove(chosen_db(db), schedule_id, by)
    except RunError as exc:
        failed(exc)
    typer.echo(f"schedule {escaped(schedule_id)} removed by {escaped(by)}")


@schedule_app.command("show")
def show_schedule(
    schedule_id: Annotated[str, typer.Argument(metavar="ID")],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """A schedule's occurrences: each one's outcome, run and reason."""
    from graph.runs.reading import RunError
    from graph.runs.schedules import occurrences

    try:
        found = occurrences(chosen_db(db), schedule_id)
    except RunError as exc:
        failed(exc)
    if json_output:
        print_json(found)
        return
    for occurrence in found:
        typer.echo(_last(occurrence))


def worker(
    db: DbOption = None,
    once: Annotated[
        bool, typer.Option("--once", help="Handle what is due now, then exit.")
    ] = False,
    now: NowOption = None,
    poll: Annotated[
        float, typer.Option(min=1.0, help="Seconds between looks at the schedules, at most.")
    ] = 60.0,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Run the schedules' due occurrences, each as a new run; an occurrence missed while no
    worker ran runs once. Until interrupted, or with --once a single pass."""
    from graph.delivery.artifacts import deliver
    from graph.runs.reading import RunError
    from graph.runs.schedules import run_due

    at = _as_of(now)
    store = chosen_db(db)
    try:
        while True:
            handled = run_due(
                store, at or datetime.now(UTC), progress(quiet, json_output), on_end=deliver
            )
            if json_output:
                print_json(handled)
            else:
                for occurrence in handled:
                    typer.echo(_last(occurrence))
            if once or at is not None:
                return
            time.sleep(poll)
    except RunError as exc:
        failed(exc)
    except KeyboardInterrupt:
        typer.echo("worker stopped", err=True)


def _next(schedule: Schedule, last: Occurrence | None, now: datetime) -> str:
    """The occurrence after now and after the last one handled (a worker may have run ahead)."""
    from graph.runs.schedules import next_occurrence

    after = max(now, datetime.fromisoformat(last["occurrence"])) if last else now
    return next_occurrence(schedule, after).isoformat()


def _as_of(given: str | None) -> datetime | None:
    if given is None:
        return None
    try:
        parsed = datetime.fromisoformat(given)
    except ValueError:
        fail(ErrorKind.BAD_INPUT, f"--now {given!r} is not an ISO 8601 time")
    if parsed.tzinfo is None:
        fail(ErrorKind.BAD_INPUT, f"--now {given!r} has no UTC offset (e.g. +01:00 or Z)")
    return parsed


def _last(occurrence: Occurrence | None) -> str:
    if occurrence is None:
        return "none yet"
    run = f" run {occurrence['thread']}" if occurrence["thread"] else ""
    missed = f" ({occurrence['missed']} missed before it)" if occurrence["missed"] else ""
    why = f": {occurrence['reason']}" if occurrence["reason"] else ""
    return (
        f"{occurrence['schedule']} {occurrence['occurrence']}: {occurrence['outcome']}"
        f"{run}{missed}{why}"
    )
