"""`warrant eval`: a suite's cases run and judged on what they delivered (`graph.evaluation.evaluate`)."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from contract.errors import ErrorKind
from graph.cli.common import DbOption, JsonOption, chosen_db, fail, failed, print_json

if TYPE_CHECKING:
    from graph.evaluation.evaluate import Settings
    from graph.evaluation.suite import Suite
    from nodes.choosers.route import Route


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
            help="Run every case meant for this chooser with it (repeat the option to compare"
            " several); a case's `choosers` say which it is meant for, the others are skipped.",
        ),
    ] = None,
    cases: Annotated[
        list[str] | None,
        typer.Option("--case", help="Only this case (repeat the option for several)."),
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
    admit: Annotated[
        bool,
        typer.Option(
            "--admit",
            help="Write the model route's reports, one per profile (passing or not): a passing one"
            " admits the route for that profile.",
        ),
    ] = False,
    admit_to: Annotated[
        Path | None,
        typer.Option("--admit-to", help="Where --admit writes (default: the suite's admissions/)."),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Run a suite's cases with the choosers each is meant for, and judge each run on what it
    delivered; exit 1 unless every run passed. A model route is evaluated under an override of
    its own (its runs are how it earns admission); --admit records what it earned.

    Rubric dimensions are graded by the route named by WARRANT_GRADER_MODEL (unknown without it)."""
    from graph.evaluation.evaluate import evaluate, rejudge
    from graph.evaluation.grader import grader_route
    from graph.evaluation.suite import load_suite
    from graph.runs.reading import RunError
    from nodes.choosers.route import RouteError

    try:
        loaded = only(load_suite(suite), cases)
        if admit and cases:
            fail(ErrorKind.BAD_INPUT, "--admit measures the whole suite: give no --case")
        if admit and (rejudge_runs or "model" not in (chooser or [])):
            fail(
                ErrorKind.BAD_INPUT,
                "--admit records a model route's evaluation: give --chooser model (and no --rejudge)",
            )
        _measuring(suite, chooser)
        if rejudge_runs and db is None:
            fail(ErrorKind.BAD_INPUT, "--rejudge reads the runs of an earlier eval: give its --db")
        done = (
            rejudge(loaded, chosen_db(db), grader_route())
            if rejudge_runs
            else evaluate(loaded, chooser, repeat, _settings(loaded, chooser, parallel, db))
        )
        rows = [row.summary() for row in done.rows]
        skipped = [asdict(skip) for skip in done.skipped]
        if not rows:
            fail(ErrorKind.BAD_INPUT, _nothing_judged(suite, chooser, rejudge_runs))
        written = _written(loaded, suite.name, rows, skipped, out)
        if admit:
            written += _admitted(loaded, suite, rows, admit_to)
    except (ValueError, RouteError) as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    except RunError as exc:
        failed(exc)
    except OSError as exc:
        fail(ErrorKind.UNREACHABLE, f"cannot write the report to {out}: {exc.strerror or exc}")
    if json_output:
        print_json(rows)
    else:
        _print(rows, skipped, written)
    raise typer.Exit(0 if all(row["pass_k"] for row in rows) else 1)


def only(loaded: Suite, cases: list[str] | None) -> Suite:
    """The suite with only the cases named (all when none is); an unknown id is bad input."""
    if not cases:
        return loaded
    known = {case.id for case in loaded.case}
    if unknown := [case for case in cases if case not in known]:
        raise ValueError(f"no case {', '.join(map(repr, unknown))} in the suite")
    return loaded.model_copy(update={"case": [c for c in loaded.case if c.id in cases]})


def _measuring(suite: Path, choosers: list[str] | None) -> None:
    """A model route under evaluation runs unadmitted: that is how it earns a report. The override
    is this process's only, and recorded in each run's `admitted` event."""
    from nodes.choosers.admissions import OVERRIDE_ENV, override_reason

    if "model" in (choosers or []) and not override_reason():
        os.environ[OVERRIDE_ENV] = f"warrant eval {suite}: the route under evaluation"


def _admitted(
    loaded: Suite, suite: Path, rows: list[dict[str, Any]], folder: Path | None
) -> list[Path]:
    """The model route's reports, written (passing or not), each naming the route's identity."""
    from graph.evaluation.admission import route_reports
    from nodes.choosers.admissions import write_route_report
    from nodes.choosers.route import route_from_env

    route = route_from_env()
    target = folder or suite.resolve().parent / "admissions"
    return [
        write_route_report(target, report) for report in route_reports(loaded, suite, rows, route)
    ]


def _settings(loaded: Suite, choosers: list[str] | None, parallel: int, db: str | None) -> Settings:
    from graph.evaluation.evaluate import Settings
    from graph.evaluation.grader import grader_route

    return Settings(
        chosen_db(db or "memory"), parallel, _model_route(loaded, choosers), grader_route()
    )


def _written(
    loaded: Suite,
    name: str,
    rows: list[dict[str, Any]],
    skipped: list[dict[str, Any]],
    out: Path | None,
) -> list[Path]:
    """The report files, when `--out` asks for them, titled with the suite's name and version."""
    from graph.evaluation.report import write_report

    if out is None:
        return []
    title = f"Evaluation: {name}" + (f", version {loaded.version}" if loaded.version else "")
    order = [case.id for case in loaded.case]
    return write_report(rows, _short, out, skipped=skipped, title=title, order=order)


LINE = 80
"""Lines wrap at 80 columns, or the terminal's width when narrower: the same lines on any wider
terminal, and text a reader takes in at a glance."""


def _print(rows: list[dict[str, Any]], skipped: list[dict[str, Any]], written: list[Path]) -> None:
    """The report as the console's lines."""
    from graph.evaluation.report import console_lines

    console = Console(highlight=False, soft_wrap=True)
    for line in console_lines(rows, skipped, _short, min(console.width, LINE)):
        console.print(line, markup=False)
    for path in written:
        console.print(f"wrote {path}", markup=False)


def _nothing_judged(suite: Path, choosers: list[str] | None, rejudged: bool) -> str:
    """Why no run was judged: running nothing is no pass."""
    if rejudged:
        return f"the database holds no run of a case of {suite}"
    return f"no case of {suite} is meant for {', '.join(choosers or ['its own choosers'])}"


def _model_route(suite: Suite, choosers: list[str] | None) -> Route | None:
    """The chooser route, when some run uses the model chooser (its concurrency bounds them)."""
    from graph.evaluation.evaluate import plan
    from nodes.choosers.route import route_from_env

    runs, _ = plan(suite, choosers, Path.cwd())
    return route_from_env() if any(chooser == "model" for _, chooser in runs) else None


def _short(chooser: str) -> str:
    """A chooser as a table shows it: a file's name, not its path."""
    kind, sep, where = chooser.partition(":")
    return f"{kind}:{Path(where).name}" if sep and kind in ("file", "replay") else chooser
