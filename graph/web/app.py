"""The web app's routes: the inbox and the runs (`/`), a run's page with its handover and its
events live (`/runs/T`, Server-Sent Events at `/runs/T/events`), its published artifacts
(`/runs/T/artifacts/NAME`, to its owner and granted readers only), and replies (`/reply`).

Replies go through the same code as `warrant resume` (`graph.people.waiting.save_answer` for a
question the run did not stop for, `graph.runs.runner.resume` otherwise), signed by the operator,
never by a form field. Readers see only the runs shared with them, and may not reply. Nothing on a
page is trusted markup: the templates escape everything.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import uvicorn
from jinja2 import Environment, FileSystemLoader, select_autoescape
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from contract.errors import WarrantError
from graph.delivery.artifacts import MEDIA_TYPES, deliver
from graph.delivery.html import handover_body
from graph.delivery.stored import AccessRefused, opened
from graph.people.waiting import save_answer, waiting
from graph.runs.interactions import InteractionError, reply_from_options
from graph.runs.reading import RunError
from graph.runs.runner import resume
from graph.web.gate import Gate, Person, gate_check, refused
from graph.web.runs import events_after, run_page, run_rows, visible_threads
from ledger.context import WarrantContext

TEMPLATES = Environment(
    loader=FileSystemLoader(
        [
            Path(__file__).with_name("templates"),
            Path(__file__).parents[1] / "delivery" / "templates",
        ]
    ),
    autoescape=select_autoescape(default=True),
)
POLL_S = 0.5
"""How often a live page's stream reads the ledger for new events."""
RETRY_MS = 500
ARTIFACT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
SECRET_ENV = "WARRANT_WEB_SECRET"


def web_app(db: str, gate: Gate, clock: Callable[[], float] = time.time) -> Starlette:
    """The app over the runs in `db`, for the people `gate` admits; `clock` (seconds since the
    epoch) dates replies and waiting ages."""

    operator = next(person.name for person in gate.people if person.role == "operator")

    def visible(person: Person) -> frozenset[str] | None:
        """The threads `person` may see: all (None) for the operator; a reader's own and those
        shared with them."""
        return None if person.role == "operator" else visible_threads(db, person.name)

    async def index(request: Request) -> HTMLResponse:
        person = request.state.person
        only = await run_in_threadpool(visible, person)
        rows = await run_in_threadpool(run_rows, db, only)
        asked = await run_in_threadpool(waiting, db, clock()) if only is None else []
        page = TEMPLATES.get_template("index.html").render(
            runs=rows, rows=asked, token=request.state.token, person=person
        )
        return HTMLResponse(page)

    async def run(request: Request) -> Response:
        thread, person = request.path_params["thread"], request.state.person
        if (reason := _hidden(await run_in_threadpool(visible, person), thread)) is not None:
            return _message(reason, 403)
        page = await run_in_threadpool(run_page, db, thread, operator)
        if page is None:
            return _message(f"no run with thread id {thread!r}", 404)
        body = handover_body(page.handover, page.figures)
        html = TEMPLATES.get_template("run.html").render(
            page=page, body=body, token=request.state.token, person=person
        )
        return HTMLResponse(html)

    async def handover(request: Request) -> Response:
        """The handover's `<article>` alone, for a live page to put in place of its own."""
        thread = request.path_params["thread"]
        if _hidden(await run_in_threadpool(visible, request.state.person), thread) is not None:
            return _message("not shared with you", 403)
        page = await run_in_threadpool(run_page, db, thread, operator)
        if page is None:
            return _message(f"no run with thread id {thread!r}", 404)
        fragment = str(handover_body(page.handover, page.figures))
        headers = {"X-Warrant-Events": str(len(page.events)), "X-Warrant-State": page.state}
        return HTMLResponse(fragment, headers=headers)

    async def events(request: Request) -> Response:
        thread = request.path_params["thread"]
        if _hidden(await run_in_threadpool(visible, request.state.person), thread) is not None:
            return _message("not shared with you", 403)
        after = _after(request)
        return EventSourceResponse(_stream(db, thread, after, request), ping=15)

    async def artifact(request: Request) -> Response:
        thread, name = request.path_params["thread"], request.path_params["name"]
        try:
            item, data = await run_in_threadpool(
                opened, db, thread, name, request.state.person.name
            )
        except AccessRefused as exc:
            return refused(exc.reason, 403)
        except RunError as exc:
            return refused(str(exc), 404)
        except WarrantError as exc:  # bytes that are not the ones published
            return refused(str(exc), 409)
        headers = {
            "Content-Security-Policy": ARTIFACT_CSP,
            "X-Warrant-Sha256": item.sha256 or "",
            "Content-Disposition": f'inline; filename="{item.name}"',
        }
        return Response(data, media_type=MEDIA_TYPES[item.kind], headers=headers)

    async def reply(request: Request) -> Response:
        form = await request.form()
        person = request.state.person
        if not secrets.compare_digest(
            str(form.get("token", "")).encode(), request.state.token.encode()
        ):
            return _message("refused: this form was not made by this app", 403)
        if person.role != "operator":
            return _message(f"refused: {person.name} reads shared runs and may not reply", 403)
        if "as" in form or "by" in form:
            return _message(
                f"refused: a form cannot name who replies; this app signs as {person.name!r} (warrant web --as NAME)",
                400,
            )
        thread, interaction = str(form.get("thread", "")), str(form.get("interaction", ""))
        try:
            made = _reply_maker(str(form.get("action", "")), form, person.name)
            await run_in_threadpool(_replied, db, thread, interaction, made, clock)
        except (RunError, InteractionError) as exc:
            return _message(str(exc), 400)
        return RedirectResponse(f"/runs/{thread}", status_code=303)

    static = StaticFiles(directory=Path(__file__).with_name("static"))
    routes = [
        Route("/", index),
        Route("/ok", lambda request: Response("ok", media_type="text/plain")),
        Route("/reply", reply, methods=["POST"]),
        Mount("/static", static, name="static"),
        Route("/runs/{thread:str}/events", events),
        Route("/runs/{thread:str}/handover", handover),
        Route("/runs/{thread:str}/artifacts/{name:str}", artifact),
        Route("/runs/{thread:path}", run),
    ]
    middleware = [Middleware(BaseHTTPMiddleware, dispatch=gate_check(gate))]
    return Starlette(routes=routes, middleware=middleware)


def _hidden(visible: frozenset[str] | None, thread: str) -> str | None:
    if visible is None or thread in visible:
        return None
    return f"run {thread!r} was not shared with you"


def _after(request: Request) -> int:
    """Where a stream resumes: after the last event the page showed (`Last-Event-ID`, sent by the
    browser on a reconnect, or `after`), whichever is later."""
    numbers = [request.headers.get("last-event-id", ""), request.query_params.get("after", "")]
    return max([int(value) for value in numbers if value.isdigit()] or [0])


async def _stream(
    db: str, thread: str, after: int, request: Request
) -> AsyncIterator[ServerSentEvent]:
    """Each new ledger event once, numbered by its sequence; `ended` when the run has its
    handover. A read that finds nothing sends nothing: the page keeps what it has."""
    yield ServerSentEvent(comment="warrant", retry=RETRY_MS)
    while not await request.is_disconnected():
        found, ended = await run_in_threadpool(events_after, db, thread, after)
        for event in found:
            if event["seq"] > after:
                after = event["seq"]
                yield ServerSentEvent(json.dumps(event), event="ledger", id=str(after))
        if ended:
            yield ServerSentEvent(json.dumps({"seq": after}), event="ended", id=str(after))
            return
        await asyncio.sleep(POLL_S)


def _replied(db: str, thread: str, interaction: str, made: Any, clock: Callable[[], float]) -> None:
    if save_answer(thread, db, interaction, made, clock()) is None:
        context = WarrantContext(clock=clock)  # the run goes on on the app's clock
        resume(thread, db, lambda event: None, made, interaction, context=context, on_end=deliver)


def _reply_maker(action: str, form: Any, by: str) -> Any:
    """The reply body for the interaction's kind, from the form's action, as `warrant resume`
    builds it from its options."""
    answer = str(form.get("answer", "")) if action == "answer" else None
    edit = str(form.get("args", "")) if action == "edit" else None
    if action not in ("answer", "approve", "reject", "edit"):
        raise InteractionError(f"unknown action {action!r}")
    return lambda kind: {
        **reply_from_options(kind, answer, action == "approve", action == "reject", edit),
        "by": by,
    }


def _message(text: str, status: int) -> HTMLResponse:
    page = TEMPLATES.get_template("message.html").render(text=text)
    return HTMLResponse(page, status_code=status)


def loopback_socket(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` (0: a free port the kernel picks), bound before the
    URLs are printed so that the printed port is the served one."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def app_secret() -> bytes:
    """`$WARRANT_WEB_SECRET` (sessions outlive a restart), else a fresh one."""
    given = os.environ.get(SECRET_ENV, "")
    return given.encode() if given else secrets.token_bytes(32)


def serve_on_loopback(
    db: str,
    people: tuple[Person, ...],
    listener: socket.socket,
    announce: Callable[[Person, str], None],
) -> None:
    """Serve the app on `listener` until stopped; `announce` gets each person's opening URL (told
    once: whoever has it acts as that person)."""
    gate = Gate(listener.getsockname()[1], app_secret(), people)
    app = web_app(db, gate)
    config = uvicorn.Config(app, log_level="warning", proxy_headers=False, server_header=False)
    for person in people:
        announce(person, gate.opening_url(person))
    uvicorn.Server(config).run(sockets=[listener])
