"""`warrant ask "QUESTION"`: Entry routes a question to a direct answer from approved reference
material, or to a governed run of one of your scenarios (`graph/entry/`)."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from contract.errors import ErrorKind
from graph.cli.common import (
    DbOption,
    JsonOption,
    QuietOption,
    chosen_db,
    fail,
    failed,
    one_line_failures,
    print_json,
    progress,
)
from graph.present.escaping import escaped

if TYPE_CHECKING:
    from graph.entry.ask import Asked
    from guards.entry import Route
    from nodes.choosers.route import Route as Route_


def register(app: typer.Typer) -> None:
    app.command()(ask)


def ask(
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="Your question, quoted.")],
    within: Annotated[
        str | None,
        typer.Option(
            "--in",
            help="Where to look: a built-in scenario, a manifest, or a folder of manifests"
            " (default: the built-in scenarios and those under $WARRANT_SCENARIO_ROOTS).",
        ),
    ] = None,
    research: Annotated[
        bool,
        typer.Option("--research", help="Research it in a governed run, whatever the rules say."),
    ] = False,
    direct: Annotated[
        bool,
        typer.Option(
            "--direct", help="Answer from reference material only, whatever the rules say."
        ),
    ] = False,
    chooser: Annotated[
        str, typer.Option(help="The research run's chooser (as `warrant run --chooser`).")
    ] = "scripted",
    entry: Annotated[
        str | None,
        typer.Option(
            "--entry",
            help="Who routes: rules, or model (the route of $WARRANT_MODEL, $OPENAI_BASE_URL)."
            " Default: model when $WARRANT_MODEL is set, else rules.",
        ),
    ] = None,
    db: DbOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Ask a question: Entry answers it directly from approved reference material (skills,
    specifications; no run's records are read) or researches it in a governed run of one of your
    scenarios, and says which and why."""
    from graph.entry.ask import ask as entry_ask
    from graph.entry.candidates import EntryError
    from nodes.choosers.route import RouteError

    if research and direct:
        fail(ErrorKind.BAD_INPUT, "--research and --direct ask for opposite routes: give one")
    forced: Route | None = "research" if research else "direct" if direct else None
    try:
        asked = entry_ask(question, within, forced, model=_entry_route(entry))
    except (EntryError, RouteError) as exc:
        fail(ErrorKind.BAD_INPUT, str(exc))
    if asked.decision.route == "direct":
        _answer_directly(asked, question, chosen_db(db), json_output)
        return
    _research(asked, question, chooser, db, json_output, quiet)


def _entry_route(entry: str | None) -> Route_ | None:
    """The model route Entry asks, if it asks one."""
    from graph.entry.candidates import EntryError
    from nodes.choosers.route import route_from_env

    chosen = entry or ("model" if os.environ.get("WARRANT_MODEL", "").strip() else "rules")
    if chosen not in ("rules", "model"):
        raise EntryError(f"--entry {chosen!r}: give rules or model")
    return route_from_env() if chosen == "model" else None


def _answer_directly(asked: Asked, question: str, db: str, json_output: bool) -> None:
    from graph.entry.ask import record_direct
    from graph.runs.reading import RunError

    try:
        event = record_direct(db, asked, question, time.time())
    except RunError as exc:
        failed(exc)
    answer = asked.answer
    assert answer is not None
    if json_output:
        print_json(
            {
                **asked.decision_json(),
                "answer": event["payload"],
                "unknown": answer.unknown,
                "not_opened": answer.not_opened,
            }
        )
        return
    lines = [
        f"route: direct — {asked.decision.reason} (entry {asked.entry})",
        "",
        "From approved reference material only (skills and specifications; no run's records were read):",
        "",
        *(
            f"- {quote.source} (sha256 {quote.sha256[:12]}…), line {quote.line}: {quote.text}"
            for quote in answer.quotes
        ),
        *([answer.unknown] if answer.unknown else []),
        *answer.not_opened,
    ]
    sys.stdout.write("\n".join(escaped(line) for line in lines) + "\n")


def _research(
    asked: Asked, question: str, chooser: str, db: str | None, json_output: bool, quiet: bool
) -> None:
    from graph.delivery.artifacts import deliver
    from graph.entry.ask import entry_record
    from graph.present.render import handover_markdown
    from graph.runs.requests import admit_request
    from graph.runs.runner import start
    from ledger.context import WarrantContext

    manifest = asked.candidates.chosen(asked.decision.scenario)
    reference = (
        asked.decision.scenario
        if asked.decision.scenario and not manifest.is_absolute()
        else str(manifest)
    )
    if not json_output and not quiet:
        typer.echo(
            f"route: research — {escaped(asked.decision.reason)} → {escaped(str(asked.decision.scenario))}"
            f" ({asked.decision.profile}), thread {asked.entry}",
            err=True,
        )
    with one_line_failures():
        request = admit_request(reference, question, chooser, asked.entry, None)
        context = WarrantContext(entry=entry_record(asked, question))
        result = start(
            request, chosen_db(db), progress(quiet, json_output), context=context, on_end=deliver
        )
    if json_output:
        print_json({**asked.decision_json(), "handover": result.handover})
    else:
        sys.stdout.write(handover_markdown(result.handover))
    if result.pending:
        raise typer.Exit(3)
