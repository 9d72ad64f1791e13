"""`warrant inbox --serve`: the inbox as a small web page on 127.0.0.1.

It lists what waits for people across runs, with each run's evidence so far, and takes a reply the
way `warrant resume` does, through the same code (`graph.waiting.save_answer` for a question the run
did not stop for, `graph.runner.resume` otherwise): an edit is checked by the guard again, a reply
for another interaction is refused. Nothing on the page is trusted markup (templates escape
everything), and every form carries a token made at start, so another site's page cannot post a
reply through the browser.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import uvicorn
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse
from starlette.routing import Route

from graph.interactions import InteractionError, reply_from_options
from graph.render import handover_markdown
from graph.runner import RunError, resume, stored_run
from graph.waiting import save_answer, waiting
from tools.validation import USER_NAME

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).with_name("templates")),
    autoescape=select_autoescape(default=True),
)


def inbox_app(db: str, user: str) -> Starlette:
    """The inbox of the runs in `db`; replies are signed `user` unless the form names someone."""
    token = secrets.token_urlsafe(24)

    async def listing(request: Request) -> HTMLResponse:
        rows = waiting(db, time.time())
        runs = {row["thread"]: stored_run(db, row["thread"]).handover for row in rows}
        page = TEMPLATES.get_template("inbox.html").render(rows=rows, runs=runs, token=token, user=user)  # fmt: skip
        return HTMLResponse(page)

    async def reply(request: Request) -> HTMLResponse | RedirectResponse:
        form = await request.form()
        if not secrets.compare_digest(str(form.get("token", "")), token):
            return _message("refused: this form was not made by this inbox", 403)
        thread, interaction = str(form.get("thread", "")), str(form.get("interaction", ""))
        by = str(form.get("as") or user)
        if not USER_NAME.fullmatch(by):
            return _message(f"{by!r} is not a user name (letters, digits and _.@+- only)", 400)
        try:
            made = _reply_maker(str(form.get("action", "")), form, by)
            if save_answer(thread, db, interaction, made) is None:
                resume(thread, db, lambda event: None, made, interaction)
        except (RunError, InteractionError) as exc:
            return _message(str(exc), 400)
        return RedirectResponse(f"/runs/{thread}", status_code=303)

    async def run(request: Request) -> HTMLResponse:
        thread = request.path_params["thread"]
        try:
            handover = stored_run(db, thread).handover
        except RunError as exc:
            return _message(str(exc), 404)
        page = TEMPLATES.get_template("run.html").render(thread=thread, text=handover_markdown(handover), handover=handover)  # fmt: skip
        return HTMLResponse(page)

    return Starlette(
        routes=[
            Route("/", listing),
            Route("/ok", lambda request: PlainTextResponse("ok")),
            Route("/reply", reply, methods=["POST"]),
            Route("/runs/{thread:path}", run),
        ]
    )


def serve_on_loopback(db: str, user: str, port: int) -> None:
    """Serve the inbox on 127.0.0.1 only (it answers for whoever can reach it) until Ctrl-C."""
    uvicorn.run(inbox_app(db, user), host="127.0.0.1", port=port, log_level="warning")


def _reply_maker(action: str, form: Any, by: str) -> Any:
    """The reply body for the interaction's kind, from the form's action, as `warrant resume`
    builds it from its options."""
    answer = str(form.get("answer", "")) if action == "answer" else None
    edit = str(form.get("args", "")) if action == "edit" else None
    if action not in ("answer", "approve", "reject", "edit"):
        raise InteractionError(f"unknown action {action!r}")
    return lambda kind: {**reply_from_options(kind, answer, action == "approve", action == "reject", edit), "by": by}  # fmt: skip


def _message(text: str, status: int) -> HTMLResponse:
    page = TEMPLATES.get_template("message.html").render(text=text)
    return HTMLResponse(page, status_code=status)
