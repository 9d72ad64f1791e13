"""Artifacts and shares of the runs in a store (`--db`): published on first need, read, shared.
The one place the CLI and the web app reach them through."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from langgraph.store.base import BaseStore

from contract.errors import ErrorKind
from graph.build import store_of
from graph.delivery.artifacts import Artifact, Published, content, deliver, published
from graph.delivery.shares import grant, revoke, shares_of
from graph.runs.reading import RunError, config_of, has_run_values, reading_graph, run_result
from guards.provenance import Locality, may_leave, words_provenance
from guards.sharing import Share, read_refusal


class AccessRefused(Exception):
    """A reader who may not open a revision, or a person who may not share or withdraw one, and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@contextmanager
def delivery_store(db: str) -> Iterator[BaseStore]:
    with reading_graph(db) as graph:
        yield store_of(graph)


def ensure_published(db: str, thread: str, publisher: str | None = None) -> Published:
    """The run's artifacts, published now if it has ended and they were not yet (owned by
    `publisher`, else this process's user, unless the run was served: `artifacts.deliver`); a run
    with no handover is `NOT_FOUND`."""
    with reading_graph(db) as graph:
        store = store_of(graph)
        if (found := published(store, thread)) is not None:
            return found
        if (result := run_result(graph, config_of(thread))).ended:
            deliver(store_of(graph), result, publisher)
        if (found := published(store, thread)) is not None:
            return found
    if not has_run_values(result.values):
        raise RunError(ErrorKind.NOT_FOUND, f"no run with thread id {thread!r}")
    raise RunError(
        ErrorKind.NOT_FOUND,
        f"run {thread!r} has not ended: its artifacts are published with its handover",
    )


def opened(db: str, thread: str, name: str, reader: str) -> tuple[Artifact, bytes]:
    """Artifact `name` of run `thread` for `reader`: `AccessRefused` unless they may read it."""
    index = ensure_published(db, thread)
    with delivery_store(db) as store:
        if reason := read_refusal(
            reader, index.owner, thread, index.report, index.revision, shares_of(store, reader)
        ):
            raise AccessRefused(reason)
        artifact = index.named(name)
        if artifact is None or artifact.sha256 is None:
            raise RunError(
                ErrorKind.NOT_FOUND,
                f"revision {index.revision} of report {index.report} has no artifact {name!r}",
            )
        data = content(store, thread, artifact)
    if data is None:
        raise RunError(
            ErrorKind.NOT_FOUND, f"artifact {name!r} of run {thread!r} is missing from the store"
        )
    return artifact, data


def may_read(db: str, thread: str, reader: str) -> str | None:
    """Why `reader` may not open run `thread`'s published revision, or None."""
    index = ensure_published(db, thread)
    with delivery_store(db) as store:
        return read_refusal(
            reader, index.owner, thread, index.report, index.revision, shares_of(store, reader)
        )


def revoke_share(db: str, thread: str, to: str, by: str) -> bool:
    """The grant of run `thread` to `to` withdrawn; only its owner may. False: there was none."""
    index = ensure_published(db, thread, by)
    if by != index.owner:
        raise AccessRefused(
            f"only the run's owner ({index.owner}) may withdraw a grant; you are {by}"
        )
    with delivery_store(db) as store:
        return revoke(store, thread, to)


def share_revision(
    db: str, thread: str, to: str, by: str, at: float, reader: Locality = "remote"
) -> Share:
    """A grant to `to` for run `thread`'s revision; only its owner may give one, and a revision
    whose run was shown local content (`guards.provenance`) only to a reader on this machine's
    side (`reader`: where the owner says they are)."""
    index = ensure_published(db, thread, by)
    if by != index.owner:
        raise AccessRefused(
            f"only the run's owner ({index.owner}) may share its revisions; you are {by}"
        )
    with reading_graph(db) as graph:
        cursor = run_result(graph, config_of(thread)).values.get("cursor") or {}
    provenance = words_provenance(cursor.get("local_read", ()))
    if not may_leave(provenance, reader):
        raise AccessRefused(
            f"revision {index.revision} of report {index.report} quotes records approved for this"
            f" machine only ({', '.join(sorted(provenance.local))}, share = local): share it"
            " with --reader-locality local only if the reader is on this machine's side"
        )
    share = Share(to, thread, index.report, index.revision, by, at)
    with delivery_store(db) as store:
        grant(store, share)
    return share
