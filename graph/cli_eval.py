"""`warrant eval`: a suite's cases run and judged on what they delivered (`graph.evaluate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from graph.cli_common import DbOption, JsonOption, cells, chosen_db, fail, print_json
from graph.evaluate import evaluate, rejudge
from graph.runner import RunError
from graph.suite import load_suite


def register(app: typer.Typer) -> None:
    """`eval` on the command line `app`."""
    app.command("eval")(eval_suite)


def eval_suite(
    suite: Annotated[Path, typer.Argument(help="A suite (TOML: [[case]] with [case.expect]).")],
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
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Run a suite's cases and judge each run on what it delivered; exit 1 unless every run passed."""  # fmt: skip
    try:
        loaded = load_suite(suite)
        if rejudge_runs:
            if db is None:
                fail(2, "--rejudge reads the runs of an earlier eval: give its --db")
            judged = rejudge(loaded, chosen_db(db))
        else:
            judged = evaluate(loaded, chooser, repeat, chosen_db(db or "memory"))
        rows = [row.summary() for row in judged]
    except ValueError as exc:
        fail(2, str(exc))
    except RunError as exc:
        fail(exc.code, str(exc))
    if json_output:
        print_json(rows)
    else:
        table = Table("case", "chooser", "pass", "pass^k", "unknown", "steps", "model calls", "tokens", "s/run", "failing (owner)", box=None, show_edge=False)  # fmt: skip
        for row in rows:
            tokens = "unknown" if row["tokens"] is None else f"{row['tokens']:.0f}"
            table.add_row(*cells(
                row["case"], _short(row["chooser"]), f"{row['pass']}/{row['runs']}", "yes" if row["pass_k"] else "no",
                str(row["unknown"]), f"{row['steps']:.1f}", f"{row['model_calls']:.1f}", tokens,
                f"{row['seconds']:.2f}", "; ".join(row["failing"]) or "-",
            ))  # fmt: skip
        Console(highlight=False, soft_wrap=True).print(table)
    raise typer.Exit(0 if all(row["pass_k"] for row in rows) else 1)


def _short(chooser: str) -> str:
    """A chooser as a table shows it: a file's name, not its path."""
    kind, sep, where = chooser.partition(":")
    return f"{kind}:{Path(where).name}" if sep and kind in ("file", "replay") else chooser
