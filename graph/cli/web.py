"""`warrant web`: the web app on 127.0.0.1 (`graph/web/`): runs live, the inbox, shared artifacts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from contract.errors import ErrorKind
from graph.cli.common import DbOption, chosen_db, fail, person
from ledger.persistence.locations import redact

if TYPE_CHECKING:
    from graph.web.gate import Person


PortOption = Annotated[
    int | None,
    typer.Option("--port", min=1, max=65535, help="The port (default: a random free one)."),
]


def register(app: typer.Typer) -> None:
    app.command()(web)


def web(
    db: DbOption = None,
    port: PortOption = None,
    responder: Annotated[
        str | None,
        typer.Option(
            "--as", help="The operator: sees every run and signs replies (default: your user name)."
        ),
    ] = None,
    readers: Annotated[
        list[str] | None,
        typer.Option(
            "--reader",
            help="A reader, who sees only what was shared with them (`warrant share`); repeat it.",
        ),
    ] = None,
) -> None:
    """Serve the runs, their handovers and events live, the inbox and shared artifacts on
    127.0.0.1 until Ctrl-C. Prints one opening URL per person; with $WARRANT_WEB_SECRET set,
    sessions outlive a restart."""
    from graph.web.gate import Person

    operator = Person(person(responder), "operator")
    others = tuple(Person(person(name, "--reader"), "reader") for name in readers or ())
    if operator.name in {reader.name for reader in others}:
        fail(ErrorKind.BAD_INPUT, f"{operator.name} is the operator; --reader names someone else")
    serve_web(chosen_db(db), (operator, *others), port)


def serve_web(db: str, people: tuple[Person, ...], port: int | None) -> None:
    from graph.web.app import loopback_socket, serve_on_loopback  # the server's imports, here only

    try:
        listener = loopback_socket(port or 0)
    except OSError as exc:
        fail(ErrorKind.BAD_INPUT, f"cannot listen on 127.0.0.1:{port or 0}: {exc.strerror or exc}")

    def announce(who: Person, url: str) -> None:
        role = "replies signed" if who.role == "operator" else "reader"
        typer.echo(f"web app of {redact(db)}, {role} {who.name}: open {url} (Ctrl-C stops it)")

    serve_on_loopback(db, people, listener, announce)
