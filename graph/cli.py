"""The `warrant` command line (DESIGN §7).

Exit codes: 0 a handover was produced (whatever its status), 2 bad input or a conflict (one line,
nothing started), 3 waiting for a person, 4 storage or chooser unreachable (the run can be resumed).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from graph.identity import check_message_id
from graph.interactions import os_user, reply_from_options
from graph.lanes import Lane, handoff_break
from graph.ledger import ledger_break
from graph.persistence import Storage, checked_db, default_db, missing_folder, redact
from graph.render import escaped, event_summary, handover_markdown
from graph.retention import prune as prune_runs
from graph.runner import (
    Outcome,
    RunError,
    admit_request,
    continuation,
    lanes_of,
    reading_graph,
    save_answer,
    start,
    stored_run,
    waiting,
)
from graph.runner import resume as resume_run
from lab import builtin_manifests
from nodes.admit import admission
from nodes.choosers.cassette import write_cassette
from nodes.continuation import revision_thread
from tools.draft import draft_manifest
from tools.records import load_scenario
from tools.validation import USER_NAME

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
        help="memory, a SQLite file, or postgresql://… (default: $WARRANT_DB or .warrant/warrant.sqlite)",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No per-turn progress on stderr.")]
ThreadArgument = Annotated[str, typer.Argument(metavar="THREAD")]


def fail(code: int, message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def chosen_db(db: str | None) -> str:
    """The `--db` given, else `$WARRANT_DB` or the default file: a value that names no store is
    bad input (exit 2); a SQLite file in a missing folder is unreachable (exit 4)."""
    try:
        chosen = checked_db(db or default_db())
    except ValueError as exc:
        fail(2, str(exc))
    if unreachable := missing_folder(chosen):
        fail(4, unreachable)
    return chosen


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def cells(*values: object) -> list[Text]:
    """Table cells as plain text: no rich markup is read from data, no control character shown."""
    return [Text(escaped(str(value))) for value in values]


def progress(quiet: bool) -> Any:
    def show(event: dict[str, Any]) -> None:
        if not quiet:
            lane = f"{event['lane']:>6} " if event.get("lane") else ""
            line = Text.assemble((lane, "cyan"), (f"turn {event['turn']}", "dim"), f" {event['type']:<9} ")  # fmt: skip
            stderr.print(line.append(event_summary(event)))

    return show


def finish(outcome: Outcome, json_output: bool, waiting_code: int = 3) -> None:
    """Print the handover; a run waiting for a person prints the handover so far and exits 3."""
    handover = outcome.handover
    if json_output:
        print_json(handover)
    else:
        sys.stdout.write(handover_markdown(handover))
    if outcome.pending:
        raise typer.Exit(waiting_code)


@app.command()
def run(
    scenario: Annotated[
        str, typer.Argument(help="A built-in scenario id (R42, …) or a manifest path.")
    ],
    goal: Annotated[str | None, typer.Option(help="Replace the scenario's goal.")] = None,
    chooser: Annotated[
        str,
        typer.Option(
            help="scripted, file:PATH (one action document per line), model, or replay:PATH (a cassette)."
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
    record: Annotated[
        Path | None,
        typer.Option(
            help="Write the run's model attempts to this JSONL cassette (for replay:PATH)."
        ),
    ] = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Admit a scenario and run the governed loop to a handover."""
    try:
        if message_id is not None:
            check_message_id(message_id)
        if record is not None:
            check_record_path(record)
        request = admit_request(scenario, goal, chooser, thread, message_id)
        result = start(request, chosen_db(db), progress(quiet))
    except ValueError as exc:
        fail(2, str(exc))
    except RunError as exc:
        fail(exc.code, str(exc))
    if record is not None:
        write_cassette(record, result.values.get("model_calls", []))
    finish(result, json_output)


@app.command("continue")
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
    """Start a new run from a finished one: its evidence carried (nothing runs again), its late
    answers, a fresh budget; its handover is the report's next revision."""  # fmt: skip
    try:
        if message_id is not None:
            check_message_id(message_id)
        request = continuation(parent, chosen_db(db), goal, chooser, thread, message_id)
        result = start(request, chosen_db(db), progress(quiet))
    except ValueError as exc:
        fail(2, str(exc))
    except RunError as exc:
        fail(exc.code, str(exc))
    finish(result, json_output)


def check_record_path(path: Path) -> None:
    """A cassette path is checked before the run: it is written after the run's end, when a
    folder, a FIFO or a link there would fail or be followed with the run's work already done."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ValueError(f"--record {path}: not a regular file (a folder, a link or a device)")
    if not path.parent.is_dir():
        raise ValueError(f"--record {path}: the folder {path.parent} does not exist")


@app.command()
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
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Continue a run: after a crash or a lost connection, or with a person's reply."""  # fmt: skip
    replying = (
        answer is not None or approve or reject or edit is not None or interaction is not None
    )
    by = responder or os_user()
    if not USER_NAME.fullmatch(by):
        fail(
            2,
            f"--as {escaped(by)!r} is not a user name (letters, digits and _.@+- only, at most 100)",
        )
    reply = (
        (lambda kind: {**reply_from_options(kind, answer, approve, reject, edit), "by": by})
        if replying
        else None
    )
    try:
        if reply is not None and interaction is not None:
            saved = save_answer(thread_id, chosen_db(db), interaction, reply)
            if saved is not None:  # an open question: the run adopts the answer at its next turn
                typer.echo(f"reply saved for {escaped(interaction)}; the run takes it in at its next turn")  # fmt: skip
                return
        result = resume_run(thread_id, chosen_db(db), progress(quiet), reply, interaction)
    except RunError as exc:
        fail(exc.code, str(exc))
    finish(result, json_output)


def stored_outcome(thread_id: str, db: str | None) -> Outcome:
    try:
        return stored_run(chosen_db(db), thread_id)
    except RunError as exc:
        fail(exc.code, str(exc))


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
    """Print a run's handover (or the handover so far, when it waits for a person)."""  # fmt: skip
    if revision is not None:
        thread_id = revision_of(thread_id, revision, db)
    result = stored_outcome(thread_id, db)
    if "handover" not in result.values and not result.pending:
        fail(
            2,
            f"run {thread_id!r} has no handover yet (turn {result.values.get('turn', 0)}); `warrant resume {thread_id}`",
        )
    finish(result, json_output, waiting_code=0)


def serve_inbox(db: str, port: int) -> None:
    """The web inbox (`graph.web_inbox`) on 127.0.0.1 until Ctrl-C."""
    from graph.web_inbox import serve_on_loopback

    typer.echo(f"inbox of {redact(db)} at http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    serve_on_loopback(db, os_user(), port)


def revision_of(thread_id: str, revision: int, db: str | None) -> str:
    """The thread whose handover is revision `revision` of the report `thread_id` belongs to."""
    values = stored_outcome(thread_id, db).values
    report = values.get("report") or thread_id
    try:
        with reading_graph(chosen_db(db)) as graph:
            found = revision_thread(graph.store, report, revision)
    except RunError as exc:
        fail(exc.code, str(exc))
    if found is None:
        fail(2, f"report {escaped(report)!r} has no revision {revision}")
    return found


@app.command()
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
        int, typer.Option("--port", min=1, max=65535, help="The web inbox's port.")
    ] = 8731,
) -> None:
    """List the interactions waiting for a person, across runs."""  # fmt: skip
    if serve:
        serve_inbox(chosen_db(db), port)
        return
    try:
        rows = waiting(chosen_db(db), time.time())
    except RunError as exc:
        fail(exc.code, str(exc))
    if json_output:
        print_json(rows)
        return
    table = Table(
        "scenario", "thread", "turn", "interaction", "waiting for", "age", box=None, show_edge=False
    )
    for row in rows:
        table.add_row(
            *cells(
                row["scenario"],
                row["thread"],
                str(row["turn"]),
                row["interaction_id"],
                row["summary"],
                f"{row['age_s']:.0f}s",
            )
        )
    Console(highlight=False, soft_wrap=True).print(
        table if rows else "Nothing is waiting for a person."
    )


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
    values = stored_outcome(thread_id, db).values
    try:
        lanes = lanes_of(chosen_db(db), thread_id)
    except RunError as exc:
        fail(exc.code, str(exc))
    if verify:
        verify_ledger(thread_id, values, lanes)
        return
    ledger = laned(values.get("events", []), lanes)
    if json_output:
        print_json(ledger)
        return
    table = Table("seq", "time", "lane", "turn", "actor", "type", "detail", box=None, show_edge=False)  # fmt: skip
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


def laned(ledger: list[dict[str, Any]], lanes: list[Lane]) -> list[dict[str, Any]]:
    """Main's events and its children's, each with its lane (`""` for main), in time order (each
    lane's own order kept)."""
    every = [{**event, "lane": ""} for event in ledger]
    every += [{**event, "lane": lane.name} for lane in lanes for event in lane.events]
    return sorted(every, key=lambda event: event["time"])


def verify_ledger(thread_id: str, values: dict[str, Any], lanes: list[Lane]) -> None:
    """One line: the ledgers hold (main's and every child's, and every receipt main received from a
    child is the one that child executed), or where one breaks (exit 1)."""
    ledger = values.get("events", [])
    broken = (
        ledger_break(thread_id, values)
        or next((broken for lane in lanes if (broken := lane.broken())), None)
        or handoff_break(values.get("evidence", []), lanes)
    )
    if broken is not None:
        fail(1, f"ledger of {thread_id!r} is broken: {broken}")
    children = f" and {len(lanes)} child lane(s) ({sum(len(lane.events) for lane in lanes)} events, each receipt received as its child executed it)" if lanes else ""  # fmt: skip
    print(f"ledger of {escaped(thread_id)!s}: {len(ledger)} events{children}, chain intact, every event sealed by this run")  # fmt: skip


@app.command()
def scenarios(json_output: JsonOption = False) -> None:
    """List the built-in scenarios."""
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
    if not folder.is_dir():
        fail(2, f"{folder} is not a folder")
    target = output or folder / "scenario.toml"
    if target.exists() and not force:
        fail(2, f"{target} exists; give --force to overwrite it or --output to write elsewhere")
    if target.resolve().parent != folder.resolve():
        fail(2, f"{target} must be in {folder}: a manifest's records are relative to its folder")
    name = (
        scenario_id
        or re.sub(r"[^A-Za-z0-9_.-]", "-", folder.resolve().name).strip("-.")
        or "scenario"
    )
    try:
        text, left_out = draft_manifest(folder, name)
        target.write_text(text, encoding="utf-8")
        scenario = load_scenario(target)
    except (ValueError, OSError) as exc:
        fail(2, str(exc).splitlines()[0])
    stderr.print(f"wrote {escaped(str(target))}: profile {scenario.profile}, {len(scenario.records)} record(s); review it before a run")  # fmt: skip
    for line in left_out:
        stderr.print(f"left out: {escaped(line)}")


@app.command()
def prune(
    keep_latest: Annotated[
        bool, typer.Option("--keep-latest", help="Keep only each run's latest checkpoint.")
    ] = False,
    older_than: Annotated[
        float | None,
        typer.Option(
            "--older-than", min=0, help="Delete runs idle for more than DAYS.", metavar="DAYS"
        ),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Delete old runs and drop superseded checkpoints."""
    if not keep_latest and older_than is None:
        fail(2, "say what to prune: --keep-latest, --older-than DAYS, or both")
    try:
        with reading_graph(chosen_db(db)) as graph:
            report = prune_runs(
                Storage(graph.checkpointer, graph.store),
                keep_latest=keep_latest,
                older_than_days=older_than,
                now=time.time(),
            )
    except RunError as exc:
        fail(exc.code, str(exc))
    if json_output:
        print_json({"deleted": report.deleted, "pruned": report.pruned, "bodies_removed": report.bodies})  # fmt: skip
    else:
        typer.echo(
            f"deleted {len(report.deleted)} run(s); kept only the latest checkpoint of {len(report.pruned)} run(s);"
            f" removed {report.bodies} stored bod{'y' if report.bodies == 1 else 'ies'} no run refers to"
        )


@app.command()
def serve(
    replicas: Annotated[
        int,
        typer.Option(
            "--replicas", min=1, max=16, help="Server processes sharing the database and Redis."
        ),
    ] = 1,
    port: Annotated[
        int,
        typer.Option(
            "--port", min=1, max=65535, help="The first replica's port; the next ones follow."
        ),
    ] = 2024,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    database_uri: Annotated[
        str,
        typer.Option(
            "--database-uri",
            envvar="DATABASE_URI",
            help="PostgreSQL the replicas share (runs, queue, ledgers).",
        ),
    ] = "",
    redis_uri: Annotated[
        str,
        typer.Option(
            "--redis-uri",
            envvar="REDIS_URI",
            help="Redis the replicas share (the run queue's signals).",
        ),
    ] = "",
) -> None:
    """Serve the graphs from REPLICAS LangGraph server processes on one PostgreSQL and one Redis
    (needs the serve extra: `pip install -e ".\\[serve]"`)."""  # fmt: skip
    from graph import serve as replica_set  # the server's packages load only here

    try:
        env = replica_set.environment(database_uri, redis_uri, os.environ)
        replica_set.prepare(env)
        started = replica_set.start(replicas, host, port, env)
    except replica_set.ServeError as exc:
        fail(exc.code, str(exc))
    for replica in started:
        typer.echo(f"replica {replica.number}  {replica.url}  pid {replica.process.pid}")
    typer.echo(
        f"serving {len(started)} replica(s) on {redact(env['DATABASE_URI'])}; Ctrl-C stops them"
    )
    raise typer.Exit(replica_set.supervise(started, lambda line: typer.echo(line, err=True)))


def main() -> None:
    """The console script: a mistyped command line is one line of error and exit 2, as any other
    bad input (Typer would print a usage block and a framed message); no arguments show the help."""
    command = typer.main.get_command(app)
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
