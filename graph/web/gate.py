"""Who may use the web app, and that a request comes from its own pages.

Being on 127.0.0.1 is no boundary against the browser: a page of another site can make its name
resolve to 127.0.0.1 (DNS rebinding) and read this one as its own. So every request must name the
bound address in `Host` (a rebinding page names its own), every post must come from that origin
(`Origin`, else `Referer`), and every request but `/ok` must carry a session cookie that only
opening a user's printed URL (`/?key=…`) sets (HttpOnly, SameSite=Strict); forms also carry the
session's token.

Each person the operator names has a key of their own: the operator (`--as`), who sees every run
of the store and signs replies, and readers (`--reader`), who see only what was shared with them
(`warrant share`). Keys, sessions and form tokens are signed under the app's secret (itsdangerous:
HMAC-SHA256, a purpose's own salt, checked in constant time), kept nowhere: with the same secret
(`$WARRANT_WEB_SECRET`) a restarted app accepts the sessions it opened before, so an open page
reconnects; without it, each start has a fresh one.

The Host check is this module's own rather than Starlette's `TrustedHostMiddleware`, which compares
the name alone (not the bound port), reads only the first of several `Host` headers and answers 400
without the reason or the headers every refusal here carries.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from itsdangerous import BadSignature, Signer
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

SAFE_METHODS = frozenset({"GET", "HEAD"})
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self';"
        " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}
"""On every answer: nothing cached or framed, only this app's own script, no address sent away."""
Next = Callable[[Request], Awaitable[Response]]
Role = Literal["operator", "reader"]


@dataclass(frozen=True)
class Person:
    name: str
    role: Role


@dataclass(frozen=True)
class Gate:
    """The port the app is bound to, its secret, and the people it admits."""

    port: int
    secret: bytes
    people: tuple[Person, ...]

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def cookie(self) -> str:
        """Named by port: cookies are not kept apart by port, two apps' sessions must be."""
        return f"warrant_web_{self.port}"

    def _signer(self, purpose: Literal["key", "session", "form"]) -> Signer:
        """Signs for one purpose only: a key is no session, a session no form token."""
        return Signer(self.secret, salt=f"warrant-web-{purpose}", digest_method=hashlib.sha256)

    def key_of(self, person: Person) -> str:
        return self._signer("key").sign(person.name).decode()

    def opening_url(self, person: Person) -> str:
        return f"http://127.0.0.1:{self.port}/?key={self.key_of(person)}"

    def person_of_key(self, key: str) -> Person | None:
        try:
            return self._named(self._signer("key").unsign(key).decode())
        except BadSignature:
            return None

    def open_session(self, person: Person) -> str:
        """`name.nonce.signature`: a fresh nonce, so each opening is a session of its own."""
        nonce = secrets.token_urlsafe(18)
        return self._signer("session").sign(f"{person.name}.{nonce}").decode()

    def session_person(self, cookie: str) -> Person | None:
        try:
            name, _, nonce = self._signer("session").unsign(cookie).decode().rpartition(".")
        except BadSignature:
            return None
        return self._named(name) if nonce else None

    def form_token(self, cookie: str) -> str:
        return self._signer("form").get_signature(cookie).decode()

    def _named(self, name: str) -> Person | None:
        return next((person for person in self.people if person.name == name), None)


def gate_check(gate: Gate) -> Callable[[Request, Next], Awaitable[Response]]:
    """The check in front of every route: the address, the origin of a post, then the session
    (`/ok` needs none: it tells nothing but that the server is up)."""

    async def check(request: Request, call_next: Next) -> Response:
        reason = foreign(request, gate)
        if reason is not None:
            return refused(reason, 403)
        if request.url.path == "/ok":
            return await call_next(request)
        if request.method == "GET" and request.url.path == "/" and "key" in request.query_params:
            return _opened(request, gate)
        cookie = request.cookies.get(gate.cookie, "")
        person = gate.session_person(cookie)
        if person is None and "/artifacts/" in request.url.path:
            return refused(
                "an artifact's URL is only a locator: its owner, or a reader it was shared with,"
                " opens it in a session of this app",
                403,
            )
        if person is None:
            return refused(
                f"no session: open the URL `warrant web` printed for you (http://127.0.0.1:{gate.port}/?key=…)",
                401,
            )
        request.state.person = person
        request.state.token = gate.form_token(cookie)
        response = await call_next(request)
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return check


def foreign(request: Request, gate: Gate) -> str | None:
    """Why the request is not from a page of this app's own address (None: it is). A rebinding
    page sends its own name as `Host`; another site's post sends its own `Origin`."""
    hosts = [host.lower() for host in request.headers.getlist("host")]
    if len(hosts) != 1 or hosts[0] not in gate.hosts:
        shown = repr(hosts[0][:80]) if len(hosts) == 1 else f"{len(hosts)} Host headers"
        return f"Host {shown} is not this app's address (127.0.0.1:{gate.port})"
    if request.method in SAFE_METHODS:
        return None
    own = f"http://{hosts[0]}"
    origin = request.headers.get("origin")
    if origin is not None:
        return None if origin.lower() == own else f"a post from {origin[:80]!r}, not from {own}"
    if request.headers.get("referer", "").lower().startswith(own + "/"):
        return None
    return f"a post must come from this app's own page ({own}); it named no Origin or Referer of it"


def _opened(request: Request, gate: Gate) -> Response:
    """A printed URL opened: a new session in an HttpOnly, SameSite=Strict cookie, and the key
    taken out of the address bar (a redirect to `/`)."""
    person = gate.person_of_key(request.query_params["key"])
    if person is None:
        return refused("that key is not this app's: open the URL `warrant web` printed", 401)
    response = RedirectResponse("/", status_code=303, headers=HEADERS)
    response.set_cookie(
        gate.cookie, gate.open_session(person), httponly=True, samesite="strict", path="/"
    )
    return response


def refused(reason: str, status: int) -> Response:
    return PlainTextResponse(f"refused: {reason}\n", status_code=status, headers=HEADERS)
