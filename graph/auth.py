"""The LangGraph server's auth handlers for Warrant (`langgraph.json` → `auth`). Deny by default.

Authority must not live in anything a client can write. A client of the server may create
threads, start runs, read threads, runs, assistants and the store, change a thread's metadata,
cancel a run, and answer a person's interaction (a command's `resume`). Everything else is
refused (403), among it: writing a thread's state (`threads.update_state`, a thread created with
`supersteps`), a command that updates state or jumps to a node (`update`, `goto`), rolling a run
back or deleting a thread (its ledger would lose what it recorded: the `rollback` multitask
strategy or cancel action, `threads.delete`), crons, assistants' creation and changes, and writes
to the store (but a reply to a run's open question, in its one shape). Every served run is
durable step by step: its `durability` is set to `sync`, whatever the request asked (DESIGN §2,
invariant 4).

The multitask strategies that remain keep the ledger's promise: `reject` and `enqueue` as the
server defines them, `interrupt` because a refused new input sends the run on from the step it was
about to take (`graph.build.where_it_stood`). The nodes check their state's seals as well
(`nodes.integrity`), so a value written by any other route still ends the run with a recorded
`state_tampered` refusal.

With `WARRANT_API_TOKEN` set, every request must carry `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import time
from typing import Any

from langgraph_sdk import Auth

from guards.action import storable_problem

TOKEN_ENV = "WARRANT_API_TOKEN"
ROLLBACK = (
    "a Warrant run is never rolled back or deleted: its ledger is append-only (cancel with"
    " action 'interrupt'; retention is the operator's, with `warrant prune`)"
)

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


@auth.on
async def deny_by_default(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Whatever no handler below allows."""
    detail = f"{ctx.resource}.{ctx.action} is not allowed on a Warrant server"
    raise _forbidden(detail, value if isinstance(value, dict) else {})


async def _allowed(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Reads, and thread creation (a thread's state is refused separately, when written)."""


for _allow in (
    auth.on.threads.create,
    auth.on.threads.read,
    auth.on.threads.search,
    auth.on.assistants.read,
    auth.on.assistants.search,
    auth.on.store.get,
    auth.on.store.search,
    auth.on.store.list_namespaces,
):
    _allow(_allowed)


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


@auth.on.threads.delete
async def no_deletes(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    raise _forbidden(ROLLBACK, value)


@auth.on.threads.create_run
async def only_resume_commands(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
    if value.get("multitask_strategy") == "rollback":
        raise _forbidden(ROLLBACK, value)
    kwargs = value.get("kwargs") or {}
    command = kwargs.get("command")
    if command is not None:
        if not isinstance(command, dict) or command.get("update") is not None or command.get("goto") is not None:  # fmt: skip
            raise _forbidden("a command to a Warrant run may only resume an interaction (no update, no goto)", value)  # fmt: skip
        if command.get("resume") is None:
            raise _forbidden("a command to a Warrant run must carry a reply to resume with", value)
    for part, given in (("input", kwargs.get("input")), ("resume", (command or {}).get("resume"))):
        if problem := storable_problem(given):  # it would be saved before any node could refuse it
            raise _forbidden(f"the run's {part} is refused: {problem.replace('the document ', '')}", value)  # fmt: skip
    kwargs["durability"] = "sync"  # each step on disk before the next: no call runs twice unseen
    kwargs["checkpoint_during"] = True


REPLY_KEY = re.compile(r"ix-[0-9a-f]{16}")


@auth.on.store.put
async def only_replies_to_open_questions(
    ctx: Auth.types.AuthContext, value: dict[str, Any]
) -> None:
    """The one store write a client may make: a reply to a run's open (non-blocking) question,
    under that run's `replies`, signed by the authenticated user and timed by the server; the run
    checks it against its own question before adopting it (`nodes.questions`)."""
    namespace, key, item = tuple(value.get("namespace") or ()), value.get("key"), value.get("value")  # fmt: skip
    if len(namespace) != 4 or namespace[:2] != ("warrant", "runs") or namespace[3] != "replies":
        raise _forbidden("store writes are refused, but for a reply under a run's replies", value)
    if not isinstance(key, str) or not REPLY_KEY.fullmatch(key) or not isinstance(item, dict):
        raise _forbidden("a reply is stored under its interaction id (ix-…) as an object", value)
    reply = item.get("reply")
    if not isinstance(reply, dict) or reply.get("interaction_id") != key or not isinstance(reply.get("answer"), str):  # fmt: skip
        raise _forbidden('a reply is {"reply": {"interaction_id": …, "answer": "…"}}', value)
    if problem := storable_problem(reply):
        raise _forbidden(f"the reply is refused: {problem.replace('the document ', '')}", value)
    signed = {"interaction_id": key, "answer": reply["answer"], "by": ctx.user.identity}
    value["value"] = {"reply": signed, "saved_at": time.time()}
    value["index"] = False
