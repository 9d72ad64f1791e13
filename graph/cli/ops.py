"""Operating commands: `prune` (retention) and `serve` (replicas of the LangGraph server)."""

from __future__ import annotations

import os
import time
from typing import Annotated

import typer

from contract.errors import ErrorKind
from graph.cli.common import DbOption, JsonOption, chosen_db, fail, failed, print_json
from ledger.persistence.locations import redact


def register(app: typer.Typer) -> None:
    """`prune` and `serve` on the command line `app`."""
    app.command()(prune)
    app.command()(serve)


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
    from graph.build import saver_of, store_of
    from graph.runs.reading import RunError, reading_graph
    from ledger.persistence.retention import prune as prune_runs
    from ledger.persistence.savers import Storage

    if not keep_latest and older_than is None:
        fail(ErrorKind.BAD_INPUT, "say what to prune: --keep-latest, --older-than DAYS, or both")
    try:
        with reading_graph(chosen_db(db)) as graph:
            report = prune_runs(
                Storage(saver_of(graph), store_of(graph)),
                keep_latest=keep_latest,
                older_than_days=older_than,
                now=time.time(),
            )
    except RunError as exc:
        failed(exc)
    if json_output:
        print_json(
            {
                "deleted": report.deleted,
                "pruned": report.pruned,
                "bodies_removed": report.bodies,
                "families_removed": report.families,
            }
        )
    else:
        typer.echo(
            f"deleted {len(report.deleted)} run(s); kept only the latest checkpoint of {len(report.pruned)} run(s);"
            f" removed {report.bodies} stored bod{'y' if report.bodies == 1 else 'ies'} and"
            f" {report.families} famil{'y' if report.families == 1 else 'ies'}' members no run refers to"
        )


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
    """Serve the graphs from N LangGraph server replicas on one PostgreSQL and Redis."""
    from graph.server import serve as replica_set  # the server's packages load only here

    with replica_set.stopped_by_signals():
        try:
            env = replica_set.environment(database_uri, redis_uri, os.environ)
            replica_set.prepare(env)
            started = replica_set.start(replicas, host, port, env)
        except replica_set.ServeError as exc:
            failed(exc)
        except (KeyboardInterrupt, replica_set.Stopped):
            raise typer.Exit(0) from None  # the replicas started so far are stopped
        for replica in started:
            typer.echo(f"replica {replica.number}  {replica.url}  pid {replica.process.pid}")
        typer.echo(
            f"serving {len(started)} replica(s) on {redact(env['DATABASE_URI'])};"
            " Ctrl-C or SIGTERM stops them"
        )
        code = replica_set.supervise(started, lambda line: typer.echo(line, err=True))
    raise typer.Exit(code)
