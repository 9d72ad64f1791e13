"""The `warrant` command line (DESIGN §7).

Exit codes: 0 a handover was produced (whatever its status), 2 bad input or a conflict (one line,
nothing started), 3 waiting for a person, 4 storage or chooser unreachable (the run can be resumed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from contract.errors import ErrorKind
from graph.cli import ask as cli_ask
from graph.cli import control as cli_control
from graph.cli import delivery as cli_delivery
from graph.cli import eval as cli_eval
from graph.cli import mcp as cli_mcp
from graph.cli import memory as cli_memory
from graph.cli import ops as cli_ops
from graph.cli import people as cli_people
from graph.cli import schedule as cli_schedule
from graph.cli import trace as cli_trace
from graph.cli import triage as cli_triage
from graph.cli import web as cli_web
from graph.cli.common import (
    DbOption,
    JsonOption,
    QuietOption,
    RecordOption,
    ThreadArgument,
    app,
    cells,
    chosen_db,
    drafted,
    fail,
    failed,
    finish,
    print_json,
    record_cassette,
    revision_of,
    started,
    stderr,
    stored_result,
    where_runs_are_kept,
)
from graph.present.escaping import escaped
from lab import builtin_manifests

if TYPE_CHECKING:
    from graph.runs.lanes import Lane
    from graph.runs.reading import RunResult


@app.command()
def run(
    scenario: Annotated[
        str, typer.Argument(help="A built-in scenario id (R42, …) or a manifest path.")
    ],
    goal: Annotated[str | None, typer.Option(help="Replace the scenario's goal.")] = None,
    chooser: Annotated[
        str,
        typer.Option(
            help="scripted (the manifest's script; with none, a scenario with a record family"
            " runs the triage baseline), baseline, file:PATH (one action document per line),"
            " model, or replay:PATH (a cassette)."
        ),
    ] = "scripted",
    db: DbOption = None,
    thread: Annotated[
        str | None, typer.Option(help="Thread id for the run (default: generated).")
    ] = None,
    message_id: Annotated[
        str | None,
        typer.Option(
            help="Idempotency key: a retry with the same id and request returns the same run."
        ),
    ] = None,
    record: RecordOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Admit a scenario and run the governed loop to a handover."""
    from graph.runs.requests import admit_request

    result = started(
        lambda: admit_request(scenario, goal, chooser, thread, message_id),
        db,
        message_id,
        quiet,
        json_output,
        record,
    )
    record_cassette(record, result)
    cli_trace.export_if_configured(result, chosen_db(db))
    finish(result, json_output)


cli_people.register(app)


def _print_version(shown: bool) -> None:
    if shown:
        from graph.version import warrant_version  # the package's metadata, read when asked

        typer.echo(f"warrant {warrant_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass


@app.command()
def show(
    thread_id: ThreadArgument,
    revision: Annotated[
        int | None,
        typer.Option(
            "--rev",
            min=1,
            help="A revision of the run's report (1: the first run's; continuations add one each).",
        ),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print a run's handover (or the handover so far, when it waits for a person)."""
    from graph.people.waiting import late_answers

    if revision is not None:
        thread_id = revision_of(thread_id, revision, db)
    result = stored_result(thread_id, db)
    if "handover" not in result.values and not result.pending:
        fail(
            ErrorKind.NOT_FOUND,
            f"run {thread_id!r} has no handover yet (turn {result.values.get('turn', 0)}); `warrant resume {thread_id}`",
        )
    late = late_answers(chosen_db(db), thread_id) if "handover" in result.values else []
    if json_output:
        print_json(shown_json(result, chosen_db(db), late))
        return
    finish(result, json_output, waiting_code=0)
    if late:
        lines = [
            "",
            f"## Late answers (after the run ended; `warrant continue {thread_id}` takes them in)",
            "",
        ]
        lines += [
            f"- {row['interaction_id']} · {row.get('by', 'a person')}: {row['answer']} (asked: {row['question']})"
            for row in late
        ]
        sys.stdout.write("\n".join(map(escaped, lines)) + "\n")


def shown_json(result: RunResult, db: str, late: list[dict[str, Any]]) -> dict[str, Any]:
    """The handover for `show --json`: its `pending` lists every interaction open for a person,
    the questions the run asked without waiting (no interrupt holds them) with the rest."""
    from graph.people.waiting import open_questions

    handover = result.handover
    shown = {**handover, "pending": [*handover["pending"], *open_questions(db, result.thread)]}
    return shown | ({"late_answers": late} if late else {})


VerifyOption = Annotated[
    bool,
    typer.Option("--verify", help="Check the ledger's chain and seals; exit 1 where it breaks."),
]


@app.command()
def events(
    thread_id: ThreadArgument,
    db: DbOption = None,
    json_output: JsonOption = False,
    verify: VerifyOption = False,
) -> None:
    """Print a run's ledger: every admission, proposal, refusal, approval, execution and stop."""
    from graph.present.render import event_summary
    from graph.runs.lanes import laned
    from graph.runs.reading import RunError, lanes_of

    values = stored_result(thread_id, db).values
    try:
        lanes = lanes_of(chosen_db(db), thread_id)
    except RunError as exc:
        failed(exc)
    if verify:
        verify_ledger(thread_id, values, lanes)
        return
    ledger = laned(values.get("events", []), lanes)
    if json_output:
        print_json(ledger)
        return
    table = Table(
        "seq", "time", "lane", "turn", "actor", "type", "detail", box=None, show_edge=False
    )
    for event in ledger:
        table.add_row(
            *cells(
                event["seq"],
                event["time"][11:23],
                event["lane"] or "main",
                str(event["turn"]),
                event["actor"],
                event["type"],
                event_summary(event),
            )
        )
    Console(highlight=False, soft_wrap=True).print(table)


def verify_ledger(thread_id: str, values: dict[str, Any], lanes: list[Lane]) -> None:
    """One line: the ledgers hold (main's and every child's, and every receipt main received from a
    child is the one that child executed), or where one breaks (exit 1)."""
    from graph.runs.lanes import handoff_break
    from graph.runs.ledger import ledger_break

    ledger = values.get("events", [])
    broken = (
        ledger_break(thread_id, values)
        or next((broken for lane in lanes if (broken := lane.broken())), None)
        or handoff_break(values.get("evidence", []), lanes)
    )
    if broken is not None:
        fail(ErrorKind.BROKEN_LEDGER, f"ledger of {thread_id!r} is broken: {broken}")
    children = (
        f" and {len(lanes)} child lane(s) ({sum(len(lane.events) for lane in lanes)} events, each receipt received as its child executed it)"
        if lanes
        else ""
    )
    print(
        f"ledger of {escaped(thread_id)!s}: {len(ledger)} events{children}, chain intact, every event sealed by this run"
    )


@app.command()
def scenarios(json_output: JsonOption = False) -> None:
    """List the built-in scenarios."""
    from nodes.admit import admission

    rows = []
    for scenario_id, path in builtin_manifests().items():
        try:
            grant = admission(scenario_id, None, None)["grant"]
            rows.append(
                {
                    "id": scenario_id,
                    "profile": grant["profile"],
                    "records": len(grant["records"]),
                    "goal": grant["goal"],
                    "manifest": str(path),
                }
            )
        except ValueError as exc:
            rows.append(
                {
                    "id": scenario_id,
                    "profile": "?",
                    "records": 0,
                    "goal": f"unusable: {exc}",
                    "manifest": str(path),
                }
            )
    if json_output:
        print_json(rows)
        return
    table = Table("id", "profile", "records", "goal", box=None, show_edge=False)
    for row in rows:
        table.add_row(*cells(row["id"], row["profile"], row["records"], row["goal"]))
    Console(highlight=False, soft_wrap=True).print(table)


scenario_app = typer.Typer(help="Draft scenario manifests.", no_args_is_help=True)
app.add_typer(scenario_app, name="scenario")


@scenario_app.command("new")
def scenario_new(
    folder: Annotated[
        Path, typer.Argument(help="A folder of logs, specs, histories or STA reports.")
    ],
    scenario_id: Annotated[
        str | None, typer.Option("--id", help="The scenario id (default: the folder's name).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option(help="Where to write it (default: FOLDER/scenario.toml).")
    ] = None,
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Write a manifest approving a folder's records by kind, for you to review before a run:
    files of one kind in one folder as one family (`glob = "runs/R42/*.log"`)."""
    from scenario.draft import folder_scenario_id

    if not folder.is_dir():
        fail(ErrorKind.BAD_INPUT, f"{folder} is not a folder")
    target = output or folder / "scenario.toml"
    if target.exists() and not force:
        fail(
            ErrorKind.BAD_INPUT,
            f"{target} exists; give --force to overwrite it or --output to write elsewhere",
        )
    if target.resolve().parent != folder.resolve():
        fail(
            ErrorKind.BAD_INPUT,
            f"{target} must be in {folder}: a manifest's records are relative to its folder",
        )
    name = scenario_id or folder_scenario_id(folder, "scenario")
    scenario, left_out = drafted(folder, target, name)
    stderr.print(
        f"wrote {escaped(str(target))}: profile {scenario.profile}, {len(scenario.records)} record(s); review it before a run"
    )
    for line in left_out:
        stderr.print(f"left out: {escaped(line)}")


cli_ops.register(app)
cli_eval.register(app)
cli_trace.register(app)
cli_memory.register(app)
cli_mcp.register(app)
cli_control.register(app)
cli_schedule.register(app)
cli_delivery.register(app)
cli_web.register(app)
cli_ask.register(app)
cli_triage.register(app)


def main() -> None:
    """The console script: a mistyped command line is one line of error and exit 2, as any other
    bad input (Typer would print a usage block and a framed message); no arguments show the help."""
    command = typer.main.get_command(app)
    command.help = (
        f"{command.help}\n\n{where_runs_are_kept()}"  # found now: it depends on the folder
    )
    try:
        code = command.main(
            args=sys.argv[1:] or ["--help"], prog_name="warrant", standalone_mode=False
        )
    except typer.Abort:
        typer.echo("error: interrupted", err=True)
        code = 130
    except typer.TyperException as exc:  # Typer's usage errors (it carries its own Click)
        context = getattr(exc, "ctx", None)
        where = context.command_path if context else "warrant"
        typer.echo(f"error: {escaped(exc.format_message())} (see `{where} --help`)", err=True)
        code = getattr(exc, "exit_code", 2)
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
