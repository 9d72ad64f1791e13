"""The private members of LangGraph's savers and stores that ledger/persistence/private_api.py
relies on, each with the signature it is called with, and how each installed release differs.

Written here, apart from the adapter, from the calls it makes; no pytest, so that the `[serve]`
extra's environment (its own saver release) can run it too: `python -m tests.private_members`
prints one line per change and exits 1 if there is any.
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import inspect
import sys
from typing import Any, NamedTuple

ADAPTER = "ledger/persistence/private_api.py"


class Member(NamedTuple):
    distribution: str
    owner: str
    """`module:Class`."""
    name: str
    shape: str
    """`function`, `coroutine`, `contextmanager` or `asynccontextmanager`."""
    signature: str
    """Without annotations, as `inspect` prints it."""


RELIED = (
    Member(
        "langgraph-checkpoint-postgres",
        "langgraph.store.postgres:PostgresStore",
        "_batch_put_ops",
        "function",
        "(self, put_ops, cur)",
    ),
    Member(
        "langgraph-checkpoint-postgres",
        "langgraph.store.postgres.aio:AsyncPostgresStore",
        "_batch_put_ops",
        "coroutine",
        "(self, put_ops, cur)",
    ),
    Member(
        "langgraph-checkpoint-postgres",
        "langgraph.checkpoint.postgres:PostgresSaver",
        "_cursor",
        "contextmanager",
        "(self, *, pipeline=False)",
    ),
    Member(
        "langgraph-checkpoint-postgres",
        "langgraph.checkpoint.postgres.aio:AsyncPostgresSaver",
        "_cursor",
        "asynccontextmanager",
        "(self, *, pipeline=False)",
    ),
    Member(
        "langgraph-checkpoint-sqlite",
        "langgraph.store.sqlite:SqliteStore",
        "_batch_put_ops",
        "function",
        "(self, put_ops, cur)",
    ),
    Member(
        "langgraph-checkpoint-sqlite",
        "langgraph.store.sqlite:SqliteStore",
        "_cursor",
        "contextmanager",
        "(self, *, transaction=True)",
    ),
    Member(
        "langgraph-checkpoint-sqlite",
        "langgraph.checkpoint.sqlite:SqliteSaver",
        "cursor",
        "contextmanager",
        "(self, transaction=True)",
    ),
)


def shape_of(function: Any) -> str:
    wrapped = getattr(function, "__wrapped__", None)
    if wrapped is not None and inspect.isgeneratorfunction(wrapped):
        return "contextmanager"
    if wrapped is not None and inspect.isasyncgenfunction(wrapped):
        return "asynccontextmanager"
    return "coroutine" if inspect.iscoroutinefunction(function) else "function"


def bare_signature(function: Any) -> str:
    signature = inspect.signature(function)
    parameters = [
        p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()
    ]
    return str(signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty))


def change(member: Member) -> str | None:
    """How the installed release differs from what the adapter passes, in one line; None if not."""
    version = metadata.version(member.distribution)
    module, _, cls = member.owner.partition(":")
    where = f"{member.distribution} {version}: {cls}.{member.name}"
    function = getattr(getattr(importlib.import_module(module), cls), member.name, None)
    if function is None:
        return f"{where} is gone; {ADAPTER} calls it"
    found = (shape_of(function), bare_signature(function))
    if found != (member.shape, member.signature):
        return (
            f"{where} is now {found[0]} {found[1]}; {ADAPTER} calls it as {member.shape} "
            f"{member.signature}: change the adapter, then pyproject.toml's bound"
        )
    return None


def changes() -> list[str]:
    return [found for member in RELIED if (found := change(member)) is not None]


if __name__ == "__main__":
    found = changes()
    print("\n".join(found) or "no change")
    sys.exit(1 if found else 0)
