"""The LangGraph server's auth handlers for Warrant (`langgraph.json` → `auth`). Deny by default.

Authority must not live in anything a client can write. A client of the server may create
threads, start runs, read threads, runs, assistants and the store, change a thread's metadata,
stop a run it started (`runs.cancel` records the stop the run takes at its next safe point;
`graph.server.control`), correct a run, and answer a person's interaction (a command's `resume`). Everything else is
refused (403), among it: writing a thread's state (`threads.update_state`, a thread created with
`supersteps`), a command that updates state or jumps to a node (`update`, `goto`), rolling a run
back or deleting a thread (its ledger would lose what it recorded: the `rollback` multitask
strategy or cancel action, `threads.delete`), a cron on a thread or a cron's change (a cron is a
schedule its creator confirms and alone sees: `graph.server.crons`), assistants' creation and changes, and writes
to the store (but a reply to a run's open question, in its one shape). Every served run is
durable step by step: its `durability` is set to `sync`, whatever the request asked (DESIGN §2,
invariant 4).

The multitask strategies that remain keep the ledger's promise: `reject` and `enqueue` as the
server defines them, `interrupt` because a refused new input sends the run on from the step it was
about to take (`graph.build.where_it_stood`). The nodes check their state's seals as well
(`ledger.integrity`), so a value written by any other route still ends the run with a recorded
`state_tampered` refusal.

A run's config is not input: a request whose `config` or `context` sets anything the server does
not set itself (a `warrant_lane`, any LangGraph-internal key, a `checkpoint_id` to fork from, a
`cron_id`: only the server's cron scheduler links a run to a cron, `graph.server.crons`) is refused
(403) before any run starts; a waiting run stays waiting. A cron whose config a run would be
refused for is refused when it is created. Warrant's own routing (a child's
lane) never comes from a config (`ledger.integrity.ChildLane`).

With `WARRANT_API_TOKENS` (`alice:tok1,bob:tok2`) or `WARRANT_API_TOKEN` (one bearer, the identity
`client`) set, every request must carry `Authorization: Bearer <token>`, and its bearer is that
identity: what a person answers, a reply and a note are signed with it. No header names a user.
The identities in `WARRANT_MEMORY_ADMINS` (comma-separated) hold the `memory:admin` permission.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from langgraph_sdk import Auth

from graph.server.control import Refused, numbered_correction, stop_by_cancel
from graph.server.crons import OWNER, CronRefused, confirm_cron, forget_cron, occurrence_of
from graph.server.memory_graph import MEMORY_ADMIN
from guards.action import storable_problem
from ledger.persistence.savers import FORK_REFUSED
from ledger.store import CONTROL
from nodes.memory import NAME

TOKEN_ENV = "WARRANT_API_TOKEN"
TOKENS_ENV = "WARRANT_API_TOKENS"
ADMINS_ENV = "WARRANT_MEMORY_ADMINS"
CLIENT = "client"
"""The identity of every caller when no token is configured, and of `WARRANT_API_TOKEN`'s bearer."""
SERVER_KEYS = frozenset(
    {
        "langgraph_auth_user",
        "langgraph_auth_user_id",
        "langgraph_auth_permissions",
        "langgraph_request_id",
        "__after_seconds__",
        "__request_start_time_ms__",
        "__langsmith_project__",
        "__langsmith_example_id__",
        "__context_provided__",
        "__otel_traceparent__",
        "__otel_tracestate__",
        "__dd_trace_headers__",
        "__event_streaming_v2",
    }
)
"""The `configurable` keys the server itself writes before a run's auth handler runs
(`langgraph_api.models.run.create_valid_run`, its event-streaming caller): the user, the request,
timing, tracing. Not `cron_id`, which a client can set as well: it passes only where the server
linked the request to that cron itself (`config_problem`'s `cron_id`). Besides them it copies the request's headers (`x-…`, `user-agent`,
`langsmith-…`), which Warrant never reads; `thread_id`, `run_id` and the rest it writes after the
handler, over what a client gave."""
HEADER_KEYS = ("x-", "langsmith-", "user-agent")
LABELS = frozenset({"configurable", "tags", "metadata", "run_name"})
"""The parts of a run's config a client may give: labels, and the configurable the server fills."""
ROLLBACK = (
    "a Warrant run is never rolled back or deleted: its ledger is append-only (cancel with"
    " action 'interrupt'; retention is the operator's, with `warrant prune`)"
)

auth = Auth()
LOG = logging.getLogger("warrant.auth")


def _forbidden(detail: str, value: Mapping[str, object]) -> Auth.exceptions.HTTPException:
    """The refusal, also written to the server's log with the thread it was aimed at."""
    LOG.warning("warrant refused a request: %s (thread %s)", detail, value.get("thread_id"))
    return Auth.exceptions.HTTPException(status_code=403, detail=detail)


def bearers(environ: Mapping[str, str]) -> dict[str, str]:
    """Each configured token and its bearer's identity; a malformed setting is a ValueError in
    one line (naming the entry, never a token)."""
    found: dict[str, str] = {}
    entries = [part.strip() for part in environ.get(TOKENS_ENV, "").split(",") if part.strip()]
    for number, entry in enumerate(entries, 1):
        identity, _, token = entry.partition(":")
        if not NAME.fullmatch(identity) or not token or token in found:
            raise ValueError(
                f"{TOKENS_ENV}: entry {number} is not identity:token (a name of letters, digits, . @ + - _ and a token of its own)"
            )
        found[token] = identity
    if single := environ.get(TOKEN_ENV):
        found.setdefault(single, CLIENT)
    return found


def bearer_of(authorization: str | None, known: Mapping[str, str]) -> str | None:
    """The identity whose token the request carries, or None; every token is compared."""
    given = (authorization or "").removeprefix("Bearer ").strip().encode()
    matched = [who for token, who in known.items() if hmac.compare_digest(given, token.encode())]
    return matched[0] if matched else None


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Everyone is the same client unless tokens are configured; then only their bearers are,
    each as the identity its token names (no header a client writes names a user)."""
    try:
        known = bearers(os.environ)
    except ValueError as exc:
        LOG.error("warrant refused a request: %s", exc)
        raise Auth.exceptions.HTTPException(status_code=500, detail=str(exc)) from None
    identity = bearer_of(authorization, known) if known else CLIENT
    if identity is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="a valid bearer token is required"
        )
    admins = {name.strip() for name in os.environ.get(ADMINS_ENV, "").split(",")}
    return {
        "identity": identity,
        "is_authenticated": True,
        "permissions": [MEMORY_ADMIN] if identity in admins else [],
    }


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


_SUPERSEDING: ContextVar[bool] = ContextVar("warrant_superseding", default=False)
"""Set while a run sent with the `interrupt` multitask strategy is being created: the server then
cancels the run in flight itself, and the new one takes the run on (`graph.build.where_it_stood`)."""


@auth.on.threads.update
async def no_state_writes(ctx: Auth.types.AuthContext, value: Auth.types.ThreadsUpdate) -> None:
    """A thread's metadata may change and its run be stopped by its owner (`runs.cancel`, a
    recorded stop: `graph.server.control`); its state is the run's own."""
    if value.get("action") == "rollback":
        raise _forbidden(ROLLBACK, value)
    if value.get("action") == "interrupt" and not _SUPERSEDING.get():
        try:
            await stop_by_cancel(ctx.user.identity, value.get("thread_id"))
        except Refused as refused:
            if refused.status_code >= 400:
                LOG.warning("warrant refused a stop: %s", refused.detail)
            raise
    if value.get("metadata") is None and value.get("action") is None:
        raise _forbidden(
            "Warrant's run state is written only by the run itself: use a run's command resume"
            " to answer an interaction",
            value,
        )


@auth.on.crons.create
async def crons_are_confirmed_schedules(
    ctx: Auth.types.AuthContext, value: Auth.types.CronsCreate
) -> None:
    """A cron is a schedule its creator confirms (`graph.server.crons`), configured as a run may
    be: a key a run's request would be refused for is refused here, when the cron is created
    (its `cron_id` is the one the server just wrote)."""
    payload = value.get("payload") or {}
    if problem := config_problem(payload, cron_id=str(value.get("cron_id"))):
        raise _forbidden(f"the cron is refused: {problem}", value)
    await confirm_cron(ctx.user.identity, value)


async def own_crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A cron is seen and deleted by its creator only."""
    return {OWNER: ctx.user.identity}


auth.on.crons.read(own_crons)
auth.on.crons.search(own_crons)


@auth.on.crons.delete
async def forget_link(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A cron deleted by its creator takes its schedule link with it."""
    await forget_cron(ctx.user.identity, (value or {}).get("cron_id"))
    return await own_crons(ctx, value)


@auth.on.crons.update
async def no_cron_changes(ctx: Auth.types.AuthContext, value: Any) -> None:
    raise _forbidden(
        "a Warrant schedule is not changed: delete the cron and create it again (a new confirmation)",
        value if isinstance(value, dict) else {},
    )


@auth.on.threads.delete
async def no_deletes(ctx: Auth.types.AuthContext, value: Auth.types.ThreadsDelete) -> None:
    raise _forbidden(ROLLBACK, value)


def config_problem(
    kwargs: Mapping[str, Any], thread_id: object = None, cron_id: str | None = None
) -> str | None:
    """What in a run request's `config` or `context` a client may not set, in one line, or None:
    every key but those the server writes itself (`SERVER_KEYS`, the request's headers, the run's
    own thread id, and a `cron_id` that is `cron_id`, the cron the server linked the request to:
    its scheduler's run carries it in the configurable and its copy, the context).
    `checkpoint_…` keys name a checkpoint to fork from (or a subgraph's)."""
    config = kwargs.get("config") or {}
    context, configurable = (
        dict(kwargs.get("context") or {}),
        dict(config.get("configurable") or {}),
    )
    for side in (context, configurable):
        if cron_id is not None and side.get("cron_id") == cron_id:
            del side["cron_id"]  # the server's own
    given = {**context, **configurable}
    keys = [str(key) for key in given]
    if any(key.startswith("checkpoint") for key in keys):
        return FORK_REFUSED
    if parts := sorted(set(config) - LABELS):
        return f"a Warrant run takes no config from its client ({', '.join(parts)} is refused)"
    own = (
        {"thread_id"}
        if thread_id is not None and str(given.get("thread_id")) == str(thread_id)
        else set()
    )
    foreign = [
        key for key in keys if not (key in SERVER_KEYS or key in own or key.startswith(HEADER_KEYS))
    ]
    if not foreign:
        return None
    why = (
        "Warrant's routing (lanes, scopes) never comes from a request"
        if any(key.startswith("warrant_") for key in foreign)
        else "the server sets what a run is configured with"
    )
    return f"a Warrant run takes no config from its client: {foreign[0][:80]!r} is refused ({why})"


@auth.on.threads.create_run
async def only_resume_commands(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> None:
    """A run's input or a reply to resume with, nothing else: no state written, no config given
    (`config_problem`), no rollback; and every step durable."""
    if value.get("multitask_strategy") == "rollback":
        raise _forbidden(ROLLBACK, value)
    if value.get("multitask_strategy") == "interrupt":
        _SUPERSEDING.set(True)
    kwargs = value.get("kwargs") or {}
    if kwargs.get("temporary"):  # a thread-less run: the server would delete its thread
        raise _forbidden(
            "a Warrant run needs a thread of its own, kept with its ledger: create one"
            " (threads.create) and run on it",
            value,
        )
    try:
        occurrence = await occurrence_of(kwargs)  # a cron's, started by the server, or None
    except CronRefused as refused:
        raise _forbidden(str(refused.detail), value) from None
    linked = occurrence[0] if occurrence else None
    if problem := config_problem(kwargs, value.get("thread_id"), linked):
        raise _forbidden(problem, value)
    command = kwargs.get("command")
    if command is not None:
        if (
            not isinstance(command, dict)
            or command.get("update") is not None
            or command.get("goto") is not None
        ):
            raise _forbidden(
                "a command to a Warrant run may only resume an interaction (no update, no goto)",
                value,
            )
        if command.get("resume") is None:
            raise _forbidden("a command to a Warrant run must carry a reply to resume with", value)
    for part, given in (("input", kwargs.get("input")), ("resume", (command or {}).get("resume"))):
        if problem := storable_problem(given):  # it would be saved before any node could refuse it
            raise _forbidden(
                f"the run's {part} is refused: {problem.replace('the document ', '')}", value
            )
    if occurrence:  # the server writes the link: the run's input held the cron's token
        kwargs["input"]["schedule"] = dict(occurrence[1])
    kwargs["durability"] = "sync"  # each step on disk before the next: no call runs twice unseen
    kwargs["checkpoint_during"] = True


REPLY_KEY = re.compile(r"ix-[0-9a-f]{16}")


@auth.on.store.put
async def only_replies_to_open_questions(
    ctx: Auth.types.AuthContext, value: Auth.types.StorePut
) -> None:
    """The store writes a client may make: a correction of a running run
    (`graph.server.control`), and a reply to a run's open (non-blocking) question, under that run's `replies`, signed by the authenticated user and timed by the server; the run
    checks it against its own question before adopting it (`nodes.questions`)."""
    namespace, key, item = tuple(value.get("namespace") or ()), value.get("key"), value.get("value")
    if len(namespace) == 4 and namespace[:2] == ("warrant", "runs") and namespace[3] == CONTROL:
        if key != "correction":
            raise _forbidden("under a run's control, a client puts only a correction", value)
        await numbered_correction(ctx.user.identity, str(namespace[2]), value)
        return
    if len(namespace) != 4 or namespace[:2] != ("warrant", "runs") or namespace[3] != "replies":
        raise _forbidden("store writes are refused, but for a reply under a run's replies", value)
    if not isinstance(key, str) or not REPLY_KEY.fullmatch(key) or not isinstance(item, dict):
        raise _forbidden("a reply is stored under its interaction id (ix-…) as an object", value)
    reply = item.get("reply")
    if (
        not isinstance(reply, dict)
        or reply.get("interaction_id") != key
        or not isinstance(reply.get("answer"), str)
    ):
        raise _forbidden('a reply is {"reply": {"interaction_id": …, "answer": "…"}}', value)
    if problem := storable_problem(reply):
        raise _forbidden(f"the reply is refused: {problem.replace('the document ', '')}", value)
    signed = {"interaction_id": key, "answer": reply["answer"], "by": ctx.user.identity}
    value["value"] = {"reply": signed, "saved_at": time.time()}
    value["index"] = False
