"""`warrant inbox --serve`: the inbox as a small web page on 127.0.0.1, which only its own pages
can drive.

It lists what waits for people across runs, with each run's evidence so far, and takes a reply the
way `warrant resume` does, through the same code (`graph.people.waiting.save_answer` for a question the run
did not stop for, `graph.runs.runner.resume` otherwise): an edit is checked by the guard again, a reply
for another interaction is refused. Nothing on the page is trusted markup (templates escape
everything).

Being on 127.0.0.1 is no boundary against the browser: a page of another site can make its name
resolve to 127.0.0.1 (DNS rebinding) and read this one as its own. So every request must name the
bound address in `Host` (a rebinding page names its own), every post must come from that origin
(`Origin`, else `Referer`), and every request but `/ok` must carry the session cookie that only
opening the printed URL (`/?key=…`) sets (HttpOnly, SameSite=Strict); forms also carry the
session's token. Replies are signed by the inbox's user (`--as`, else the OS user), never by a
form field: a page cannot choose who approves.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from graph.people.waiting import save_answer, waiting
from graph.present.render import handover_markdown
from graph.runs.interactions import InteractionError, reply_from_options
from graph.runs.runner import RunError, resume, stored_run
from nodes.context import WarrantContext

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).with_name("templates")),
    autoescape=select_autoescape(default=True),
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self';"
        " frame-ancestors 'none'; base-uri 'none'"
    ),
}
"""On every answer: nothing cached or framed, no script, no address sent to another site."""
Next = Callable[[Request], Awaitable[Response]]


@dataclass
class Gate:
    """What tells this inbox's own pages from any other: the port it is bound to, the key it
    printed, and the sessions that key opened (cookie value → that session's form token)."""

    port: int
    key: str
    sessions: dict[str, str] = field(default_factory=dict)

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def cookie(self) -> str:
        """Named by port: cookies are not kept apart by port, two inboxes' sessions must be."""
        return f"warrant_inbox_{self.port}"

    def open_session(self) -> str:
        session = secrets.token_urlsafe(32)
        self.sessions[session] = secrets.token_urlsafe(24)
        return session


def inbox_app(
    db: str, user: str, port: int, key: str, clock: Callable[[], float] = time.time
) -> Starlette:
    """The inbox of the runs in `db` served on 127.0.0.1:`port`, opened with `key`; every reply is
    signed `user`. Each request reads `clock` once (seconds since the epoch): the waiting ages,
    when a reply is saved, which interactions have expired."""

    async def listing(request: Request) -> HTMLResponse:
        rows = waiting(db, clock())
        runs = {row["thread"]: stored_run(db, row["thread"]).handover for row in rows}
        page = TEMPLATES.get_template("inbox.html").render(
            rows=rows, runs=runs, token=request.state.token, user=user
        )
        return HTMLResponse(page)

    async def reply(request: Request) -> HTMLResponse | RedirectResponse:
        form = await request.form()
        if not secrets.compare_digest(
            str(form.get("token", "")).encode(), request.state.token.encode()
        ):
            return _message("refused: this form was not made by this inbox", 403)
        if "as" in form or "by" in form:
            return _message(
                f"refused: a form cannot name who replies; this inbox signs as {user!r} (warrant inbox --serve --as NAME)",
                400,
            )
        thread, interaction = str(form.get("thread", "")), str(form.get("interaction", ""))
        try:
            made = _reply_maker(str(form.get("action", "")), form, user)
            if save_answer(thread, db, interaction, made, clock()) is None:
                context = WarrantContext(clock=clock)  # the run goes on on the inbox's clock
                resume(thread, db, lambda event: None, made, interaction, context=context)
        except (RunError, InteractionError) as exc:
            return _message(str(exc), 400)
        return RedirectResponse(f"/runs/{thread}", status_code=303)

    async def run(request: Request) -> HTMLResponse:
        thread = request.path_params["thread"]
        try:
            handover = stored_run(db, thread).handover
        except RunError as exc:
            return _message(str(exc), 404)
        page = TEMPLATES.get_template("run.html").render(
            thread=thread, text=handover_markdown(handover), handover=handover
        )
        return HTMLResponse(page)

    routes = [
        Route("/", listing),
        Route("/ok", lambda request: PlainTextResponse("ok")),
        Route("/reply", reply, methods=["POST"]),
        Route("/runs/{thread:path}", run),
    ]
    guard = _guard(Gate(port, key))
    return Starlette(routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)])


def _guard(gate: Gate) -> Callable[[Request, Next], Awaitable[Response]]:
    """The check in front of every route: the address, the origin of a post, then the session
    (`/ok` needs none: it tells nothing but that the server is up)."""

    async def guard(request: Request, call_next: Next) -> Response:
        reason = _foreign(request, gate)
        if reason is not None:
            return _refused(reason, 403)
        if request.url.path == "/ok":
            return await call_next(request)
        if request.method == "GET" and request.url.path == "/" and "key" in request.query_params:
            return _opened(request, gate)
        token = gate.sessions.get(request.cookies.get(gate.cookie, ""))
        if token is None:
            return _refused(
                f"no session: open the URL `warrant inbox --serve` printed (http://127.0.0.1:{gate.port}/?key=…)",
                401,
            )
        request.state.token = token
        response = await call_next(request)
        response.headers.update(HEADERS)
        return response

    return guard


def _foreign(request: Request, gate: Gate) -> str | None:
    """Why the request is not from a page of this inbox's own address (None: it is). A rebinding
    page sends its own name as `Host`; another site's post sends its own `Origin`."""
    hosts = [host.lower() for host in request.headers.getlist("host")]
    if len(hosts) != 1 or hosts[0] not in gate.hosts:
        shown = repr(hosts[0][:80]) if len(hosts) == 1 else f"{len(hosts)} Host headers"
        return f"Host {shown} is not this inbox's address (127.0.0.1:{gate.port})"
    if request.method in SAFE_METHODS:
        return None
    own = f"http://{hosts[0]}"
    origin = request.headers.get("origin")
    if origin is not None:
        return None if origin.lower() == own else f"a post from {origin[:80]!r}, not from {own}"
    if request.headers.get("referer", "").lower().startswith(own + "/"):
        return None
    return (
        f"a post must come from this inbox's own page ({own}); it named no Origin or Referer of it"
    )


def _opened(request: Request, gate: Gate) -> Response:
    """The printed URL opened: a new session in an HttpOnly, SameSite=Strict cookie, and the key
    taken out of the address bar (a redirect to `/`)."""
    if not secrets.compare_digest(request.query_params["key"].encode(), gate.key.encode()):
        return _refused(
            "that key is not this inbox's: open the URL `warrant inbox --serve` printed", 401
        )
    response = RedirectResponse("/", status_code=303, headers=HEADERS)
    response.set_cookie(
        gate.cookie, gate.open_session(), httponly=True, samesite="strict", path="/"
    )
    return response


def _refused(reason: str, status: int) -> Response:
    return PlainTextResponse(f"refused: {reason}\n", status_code=status, headers=HEADERS)


def loopback_socket(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` (0: a free port the kernel picks), bound before the
    URL is printed so that the printed port is the served one."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def serve_on_loopback(
    db: str, user: str, listener: socket.socket, announce: Callable[[str], None]
) -> None:
    """Serve the inbox on `listener` until Ctrl-C; `announce` gets the URL that opens it (with a
    fresh key, told once: whoever has it can answer as `user`)."""
    port = listener.getsockname()[1]
    key = secrets.token_urlsafe(32)
    app = inbox_app(db, user, port, key)
    config = uvicorn.Config(app, log_level="warning", proxy_headers=False, server_header=False)
    announce(f"http://127.0.0.1:{port}/?key={key}")
    uvicorn.Server(config).run(sockets=[listener])


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
