"""The `warrant` command line (DESIGN §7).

Exit codes: 0 a handover was produced (whatever its status), 2 bad input (one line, nothing
started), 3 waiting for a person, 4 storage or chooser service unreachable.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import psycopg
import typer
from langgraph.graph.state import CompiledStateGraph
from rich.console import Console
from rich.table import Table

from graph.build import compile_graph
from graph.persistence import StorageUnavailable, default_db, open_saver
from graph.render import event_summary, handover_markdown
from lab import builtin_manifests
from nodes.admit import admission
from nodes.choosers import ChooserError
from nodes.context import WarrantContext
from tools.errors import ManifestError

app = typer.Typer(
    help="Warrant: a governed evidence agent. The chooser proposes; the guard authorizes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
progress = Console(stderr=True, highlight=False, soft_wrap=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="memory, a SQLite file, or postgresql://… (default: $WARRANT_DB or .warrant/warrant.sqlite)",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


def fail(code: int, message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def opened_graph(db: str | None) -> Iterator[CompiledStateGraph]:
    """The graph compiled with the chosen checkpointer; storage failures exit with code 4."""
    try:
        with open_saver(db or default_db()) as saver:
            yield compile_graph(saver)
    except StorageUnavailable as exc:
        fail(4, str(exc))
    except (sqlite3.Error, psycopg.OperationalError) as exc:
        fail(4, f"storage failed: {exc}")


def stored_values(graph: CompiledStateGraph, thread_id: str, db: str | None) -> dict[str, Any]:
    values = graph.get_state({"configurable": {"thread_id": thread_id}}).values
    if not values:
        fail(2, f"no run with thread id {thread_id!r} in {db or default_db()}")
    return values


@app.command()
def run(
    scenario: Annotated[
        str, typer.Argument(help="A built-in scenario id (R42, …) or a manifest path.")
    ],
    goal: Annotated[str | None, typer.Option(help="Replace the scenario's goal.")] = None,
    chooser: Annotated[
        str, typer.Option(help="scripted or file:PATH (one action document per line).")
    ] = "scripted",
    db: DbOption = None,
    thread: Annotated[
        str | None, typer.Option(help="Thread id for the run (default: generated).")
    ] = None,
    json_output: JsonOption = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No per-turn progress on stderr.")
    ] = False,
) -> None:
    """Admit a scenario and run the governed loop to a handover."""
    try:
        pinned = admission(scenario, goal, chooser)
    except (ManifestError, ChooserError, ValueError) as exc:
        fail(2, str(exc))
    grant = pinned["grant"]
    reference = (
        grant["id"]
        if grant["id"] in builtin_manifests() and scenario == grant["id"]
        else grant["manifest"]
    )
    thread_id = thread or f"{grant['id']}-{secrets.token_hex(4)}"
    config = {"configurable": {"thread_id": thread_id}}
    with opened_graph(db) as graph:
        if graph.get_state(config).values:
            fail(2, f"thread {thread_id!r} already has a run; see `warrant show {thread_id}`")
        run_input = {"scenario": reference, "goal": pinned["goal"], "chooser": pinned["chooser"]}
        _drive(graph, run_input, config, quiet)
        values = graph.get_state(config).values
    _print_handover(values["handover"], json_output)


def _drive(
    graph: CompiledStateGraph, run_input: dict[str, Any], config: dict[str, Any], quiet: bool
) -> None:
    updates = graph.stream(
        run_input, config, stream_mode="updates", durability="sync", context=WarrantContext()
    )
    try:
        for update in updates:
            for node_update in update.values():
                for event in (node_update or {}).get("events", []):
                    if not quiet:
                        progress.print(
                            f"[dim]turn {event['turn']}[/dim] {event['type']:<9} {event_summary(event)}",
                            markup=True,
                        )
    except ChooserError as exc:
        fail(4, f"chooser unavailable: {exc}")


def _print_handover(handover: dict[str, Any], json_output: bool) -> None:
    if json_output:
        print_json(handover)
    else:
        sys.stdout.write(handover_markdown(handover))


@app.command()
def show(
    thread_id: Annotated[str, typer.Argument(metavar="THREAD")],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print the handover of a finished run."""
    with opened_graph(db) as graph:
        values = stored_values(graph, thread_id, db)
    if "handover" not in values:
        fail(2, f"run {thread_id!r} has not produced a handover yet (turn {values.get('turn', 0)})")
    _print_handover(values["handover"], json_output)


@app.command()
def events(
    thread_id: Annotated[str, typer.Argument(metavar="THREAD")],
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print a run's ledger: every admission, proposal, refusal, approval, execution and stop."""
    with opened_graph(db) as graph:
        ledger = stored_values(graph, thread_id, db).get("events", [])
    if json_output:
        print_json(ledger)
        return
    table = Table("seq", "time", "turn", "actor", "type", "detail", box=None, show_edge=False)
    for event in ledger:
        table.add_row(
            str(event["seq"]),
            event["time"][11:23],
            str(event["turn"]),
            event["actor"],
            event["type"],
            event_summary(event),
        )
    Console(highlight=False, soft_wrap=True).print(table)


@app.command()
def scenarios(json_output: JsonOption = False) -> None:
    """List the built-in scenarios."""
    rows = []
    for scenario_id, path in builtin_manifests().items():
        try:
            pinned = admission(scenario_id, None, None)["grant"]
            rows.append(
                {
                    "id": scenario_id,
                    "profile": pinned["profile"],
                    "records": len(pinned["records"]),
                    "goal": pinned["goal"],
                    "manifest": str(path),
                }
            )
        except (ManifestError, ValueError) as exc:
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
        table.add_row(row["id"], row["profile"], str(row["records"]), row["goal"])
    Console(highlight=False, soft_wrap=True).print(table)


if __name__ == "__main__":
    app()
