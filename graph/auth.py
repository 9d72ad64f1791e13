"""The LangGraph server's auth handlers for Warrant (`langgraph.json` → `auth`).

Authority must not live in anything a client can write. A client of the server may start runs,
read them, and answer a person's interaction (a command's `resume`); it may not write a thread's
state (`threads.update_state`, a thread created with `supersteps`), send a command that updates
state or jumps to a node (`update`, `goto`), roll a run back (its ledger would lose what it
recorded: the `rollback` multitask strategy or cancel action), or write Warrant's store
namespaces. The other multitask strategies keep the ledger's promise: `reject` and `enqueue` as
the server defines them, `interrupt` because a refused new input sends the run on from the step
it was about to take (`nodes.guard.where_it_stood`). The nodes check
their state's seals as well (`nodes.integrity`), so a value written by any other route still ends
the run with a recorded `state_tampered` refusal.

With `WARRANT_API_TOKEN` set, every request must carry `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import logging
import os
from typing import Any

from langgraph_sdk import Auth

from guards.action import storable_problem

TOKEN_ENV = "WARRANT_API_TOKEN"
STORE_PREFIX = "warrant"
"""The first part of every store namespace Warrant writes."""

auth = Auth()
LOG = logging.getLogger("warrant.auth")


def _forbidden(detail: str, value: dict[str, Any]) -> Auth.exceptions.HTTPException:
    """The refusal, also written to the server's log with the thread it was aimed at."""
    LOG.warning("warrant refused a request: %s (thread %s)", detail, value.get("thread_id"))
    return Auth.exceptions.HTTPException(status_code=403, detail=detail)


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Everyone is the same client unless a token is configured; then only its bearers are."""
    token = os.environ.get(TOKEN_ENV)
    if token:
        given = (authorization or "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise Auth.exceptions.HTTPException(status_code=401, detail="a valid bearer token is required")  # fmt: skip
    return {"identity": "client", "is_authenticated": True}


ROLLBACK = (
    "a Warrant run is never rolled back: its ledger is append-only (cancel with action"
    " 'interrupt', or start a run on a new thread)"
)


@auth.on.threads.update
async def no_state_writes(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    """A thread's metadata may change and its runs be cancelled; its state is the run's own."""
    if value.get("action") == "rollback":
        raise _forbidden(ROLLBACK, value)
    if value.get("metadata") is None and value.get("action") is None:
        raise _forbidden(
            "Warrant's run state is written only by the run itself: use a run's command resume"
            " to answer an interaction",
            value,
        )


@auth.on.threads.create_run
async def only_resume_commands(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    if value.get("multitask_strategy") == "rollback":
        raise _forbidden(ROLLBACK, value)
    kwargs = value.get("kwargs") or {}
    command = kwargs.get("command") or {}
    if command.get("update") is not None or command.get("goto") is not None:
        raise _forbidden(
            "a command to a Warrant run may only resume an interaction (no update, no goto)", value
        )
    for part, given in (("input", kwargs.get("input")), ("resume", command.get("resume"))):
        if problem := storable_problem(given):  # it would be saved before any node could refuse it
            raise _forbidden(f"the run's {part} is refused: {problem.replace('the document ', '')}", value)  # fmt: skip


@auth.on.store.put
async def no_store_writes(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    if tuple(value.get("namespace") or ())[:1] == (STORE_PREFIX,):
        raise _forbidden(
            f"the store namespace {STORE_PREFIX!r} is written only by Warrant's runs", value
        )


@auth.on.store.delete
async def no_store_deletes(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    await no_store_writes(ctx, value)
