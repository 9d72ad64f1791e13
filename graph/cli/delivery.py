"""`warrant artifacts`, `export` and `share`: a published revision's files, kept, and granted to a
reader (`graph/delivery/`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from contract.errors import ErrorKind, WarrantError
from graph.cli.common import (
    DbOption,
    JsonOption,
    ThreadArgument,
    chosen_db,
    fail,
    failed,
    person,
    print_json,
    revision_of,
)
from graph.present.escaping import escaped
from guards.provenance import Locality

RevisionOption = Annotated[
    int | None,
    typer.Option(
        "--rev",
        min=1,
        help="A revision of the run's report (1: the first run's; continuations add one each).",
    ),
]


def register(app: typer.Typer) -> None:
    app.command()(artifacts)
    app.command()(export)
    app.command()(share)


def artifacts(
    thread_id: ThreadArgument,
    revision: RevisionOption = None,
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """List a published revision's artifacts: name, type, size and sha256 (publishing them
    first if the run has ended and they were not yet)."""
    from graph.delivery.stored import ensure_published
    from graph.runs.reading import RunError

    thread = revision_of(thread_id, revision, db) if revision else thread_id
    try:
        index = ensure_published(chosen_db(db), thread)
    except RunError as exc:
        failed(exc)
    if json_output:
        print_json(index.to_dict())
        return
    typer.echo(
        f"revision {index.revision} of report {escaped(index.report)} (run {escaped(thread)}),"
        f" owner {escaped(index.owner)}"
    )
    for item in index.artifacts:
        digest = item.sha256 or f"not drawn: {item.error}"
        typer.echo(f"  {item.name:<22} {item.kind:<8} {item.size:>9} B  {escaped(digest)}")


def export(
    thread_id: ThreadArgument,
    folder: Annotated[
        Path, typer.Argument(metavar="DIR", help="Where to write them (made if missing).")
    ],
    revision: RevisionOption = None,
    db: DbOption = None,
) -> None:
    """Write a published revision's artifacts into DIR: handover.md, handover.html (an anchor per
    evidence item), handover.json and its figures, each checked against its sha256."""
    from graph.delivery.artifacts import content
    from graph.delivery.stored import delivery_store, ensure_published

    thread = revision_of(thread_id, revision, db) if revision else thread_id
    try:
        index = ensure_published(chosen_db(db), thread)
        with delivery_store(chosen_db(db)) as store:
            files = [(item, content(store, thread, item)) for item in index.artifacts]
    except WarrantError as exc:
        failed(exc)
    if folder.exists() and not folder.is_dir():
        fail(ErrorKind.BAD_INPUT, f"{escaped(str(folder))} is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    for item, data in files:
        if data is None:
            typer.echo(f"not written: {item.name} ({escaped(item.error or 'no bytes')})", err=True)
            continue
        (folder / item.name).write_bytes(data)
    written = sum(1 for _, data in files if data is not None)
    typer.echo(
        f"{written} artifact(s) of revision {index.revision} written to {escaped(str(folder))}"
    )


def share(
    thread_id: ThreadArgument,
    to: Annotated[str, typer.Option("--to", help="The reader granted this revision.")],
    revision: RevisionOption = None,
    responder: Annotated[
        str | None,
        typer.Option("--as", help="Who shares it: the run's owner (default: your user name)."),
    ] = None,
    withdraw: Annotated[
        bool, typer.Option("--revoke", help="Withdraw the reader's grant of this revision instead.")
    ] = False,
    reader_locality: Annotated[
        Locality,
        typer.Option(
            "--reader-locality",
            help="Where the reader is: remote (the default) is never granted a revision whose run"
            " read a share = local record; local: on this machine's side.",
        ),
    ] = "remote",
    db: DbOption = None,
    json_output: JsonOption = False,
) -> None:
    """Grant one reader one revision of a run's report: the web app then serves its artifacts to
    them, and to nobody else but its owner (another revision stays refused). --revoke withdraws it."""
    from graph.delivery.stored import AccessRefused, revoke_share, share_revision
    from graph.runs.reading import RunError

    thread = revision_of(thread_id, revision, db) if revision else thread_id
    reader, by = person(to, "--to"), person(responder)
    if withdraw:
        try:
            withdrawn = revoke_share(chosen_db(db), thread, reader, by)
        except RunError as exc:
            failed(exc)
        except AccessRefused as exc:
            fail(ErrorKind.CONFLICT, exc.reason)
        if not withdrawn:
            fail(
                ErrorKind.NOT_FOUND,
                f"run {escaped(thread)!r} was not shared with {escaped(reader)}",
            )
        typer.echo(f"withdrew {escaped(reader)}'s grant of run {escaped(thread)}")
        return
    try:
        granted = share_revision(chosen_db(db), thread, reader, by, time.time(), reader_locality)
    except RunError as exc:
        failed(exc)
    except AccessRefused as exc:
        fail(ErrorKind.CONFLICT, exc.reason)
    if json_output:
        print_json(granted.__dict__)
        return
    typer.echo(
        f"shared revision {granted.revision} of report {escaped(granted.report)} with"
        f" {escaped(reader)}"
    )
