"""`warrant trace`: where a run's evidence went (stored, sent to the model, cited) and the first
hand-off where some was lost; for a model run, which reminders each request delivered and which it
dropped; its spans exported over OTLP (`graph.present.tracing`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from contract.errors import ErrorKind
from graph.cli.common import (
    DbOption,
    JsonOption,
    ThreadArgument,
    cells,
    chosen_db,
    fail,
    failed,
    print_json,
    stderr,
    stored_result,
)

if TYPE_CHECKING:
    from graph.runs.reading import RunResult


def register(app: typer.Typer) -> None:
    """`trace` on the command line `app`."""
    app.command("trace")(trace)


def trace(
    thread_id: ThreadArgument,
    export: Annotated[
        bool,
        typer.Option("--export", help="Send the run's spans to OTEL_EXPORTER_OTLP_ENDPOINT."),
    ] = False,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show where a run's evidence went: stored, sent to the model, cited; and the first loss;
    for a model run, each request's reminders, delivered and dropped."""
    from graph.present.flows import evidence_flow, first_loss, reminder_flow, reminder_line
    from graph.present.tracing import export_otlp, finished_spans, otlp_configured, span_specs

    outcome = stored_result(thread_id, db)
    ledger = _ledger(thread_id, db, outcome.values)
    flows = evidence_flow(outcome.handover, ledger)
    loss = first_loss(flows)
    reminders = reminder_flow(ledger)
    if export:
        if not otlp_configured():
            fail(
                ErrorKind.BAD_INPUT,
                "--export needs OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)",
            )
        if problem := export_otlp(finished_spans(span_specs(thread_id, outcome.values, ledger))):
            fail(ErrorKind.UNREACHABLE, problem)
    if json_output:
        print_json(
            {
                "thread_id": thread_id,
                "evidence": [asdict(flow) for flow in flows],
                "first_loss": loss,
                "reminders": [asdict(request) for request in reminders],
            }
        )
        return
    table = Table("ref", "turn", "stored", "sent to the model", "cited", box=None, show_edge=False)
    for flow in flows:
        table.add_row(*cells(flow.ref, flow.turn, _yes(flow.stored), flow.sent, _yes(flow.cited)))
    console = Console(highlight=False, soft_wrap=True)
    console.print(table if flows else "No evidence was gathered.")
    console.print(
        f"first loss: {loss}" if loss else "no evidence lost: every item was stored, sent and cited"
    )
    if reminders:  # a model run: what each request reminded the model of, and what it left out
        console.print("reminders, per model request (delivered: in a request the model answered):")
        for request in reminders:
            console.print(reminder_line(request), markup=False)


def export_if_configured(outcome: RunResult, db: str) -> None:
    """After a run: its spans to the OTLP endpoint, when one is configured; a failure is said on
    stderr in one line and changes nothing about the run. (An in-memory run's children are gone
    with the command, so its trace has the main lane only.)"""
    from graph.present.tracing import export_otlp, finished_spans, otlp_configured, span_specs
    from graph.runs.lanes import laned
    from graph.runs.reading import lanes_of

    if not otlp_configured():
        return
    lanes = lanes_of(db, outcome.thread) if db != "memory" else []
    ledger = laned(outcome.values.get("events", []), lanes)
    if problem := export_otlp(finished_spans(span_specs(outcome.thread, outcome.values, ledger))):
        stderr.print(f"warning: trace not exported: {problem}")


def _ledger(thread_id: str, db: str | None, values: dict[str, Any]) -> list[dict[str, Any]]:
    from graph.runs.lanes import laned
    from graph.runs.reading import RunError, lanes_of

    try:
        return laned(values.get("events", []), lanes_of(chosen_db(db), thread_id))
    except RunError as exc:
        failed(exc)


def _yes(value: bool) -> str:
    return "yes" if value else "no"
