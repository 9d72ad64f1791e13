"""`warrant eval`: a suite's cases run and judged on what they delivered (`graph.evaluation.evaluate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from graph.cli.common import DbOption, JsonOption, cells, chosen_db, fail, failed, print_json
from graph.errors import ErrorKind
from graph.evaluation.evaluate import Settings, evaluate, rejudge
from graph.evaluation.grader import grader_route
from graph.evaluation.report import COLUMNS, row_cells, write_report
from graph.evaluation.suite import Suite, load_suite
from graph.runs.runner import RunError
from nodes.choosers.route import Route, RouteError, route_from_env


def register(app: typer.Typer) -> None:
    """`eval` on the command line `app`."""
    app.command("eval")(eval_suite)


def eval_suite(
    # Rich markup would eat bare brackets in help text: they are escaped.
    suite: Annotated[
        Path, typer.Argument(help="A suite (TOML: \\[\\[case]] with \\[case.expect]).")
    ],
    chooser: Annotated[
        list[str] | None,
        typer.Option(
            "--chooser",
            help="Run every case with this chooser (repeat the option to compare several).",
        ),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            min=1,
            max=100,
            help="Runs per case and chooser (default: each case's repeat).",
        ),
    ] = None,
    rejudge_runs: Annotated[
        bool,
        typer.Option(
            "--rejudge", help="Judge the runs an earlier eval left in --db again, running nothing."
        ),
    ] = False,
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel",
            min=1,
            max=64,
            help="Runs at once (a model route's runs: at most WARRANT_MODEL_CONCURRENCY, default 1).",
        ),
    ] = 1,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write report.md, report.json and chart.png to this folder."),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Run a suite's cases and judge each run on what it delivered; exit 1 unless every run passed.

    Rubric dimensions are graded by the route named by WARRANT_GRADER_MODEL (unknown without it)."""
    try:
        loaded = load_suite(suite)
        grader = grader_route()
        if rejudge_runs:
            if db is None:
                fail(
                    ErrorKind.BAD_INPUT,
                    "--rejudge reads the runs of an earlier eval: give its --db",
                )
            judged = rejudge(loaded, chosen_db(db), grader)
        else:
            settings = Settings(
                chosen_db(db or "memory"), parallel, _model_route(loaded, chooser), grader
            )
            judged = evaluate(loaded, chooser, repeat, settings)
        rows = [row.summary() for row in judged]
        written = write_report(rows, _short, out) if out is not None else []
    except (ValueError, RouteError) as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    except RunError as exc:
        failed(exc)
    except OSError as exc:
        fail(ErrorKind.UNREACHABLE, f"cannot write the report to {out}: {exc.strerror or exc}")
    if json_output:
        print_json(rows)
    else:
        table = Table(*COLUMNS, box=None, show_edge=False)
        for row in rows:
            table.add_row(*cells(*row_cells(row, _short(row["chooser"]))))
        console = Console(highlight=False, soft_wrap=True)
        console.print(table)
        for path in written:
            console.print(f"wrote {path}")
    raise typer.Exit(0 if all(row["pass_k"] for row in rows) else 1)


def _model_route(suite: Suite, choosers: list[str] | None) -> Route | None:
    """The chooser route, when some run uses the model chooser (its concurrency bounds them)."""
    used = choosers or [case.chooser for case in suite.case]
    return route_from_env() if "model" in used else None


def _short(chooser: str) -> str:
    """A chooser as a table shows it: a file's name, not its path."""
    kind, sep, where = chooser.partition(":")
    return f"{kind}:{Path(where).name}" if sep and kind in ("file", "replay") else chooser
