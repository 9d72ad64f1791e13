"""`warrant mcp serve`: a scenario's governed tools served to MCP clients, one run per session.

Each MCP session (a stdio connection; an HTTP client's `Mcp-Session-Id`) opens its own run of the
scenario at its first request (`graph.mcp.session`): fresh admission, the grant's budgets, its own
ledger. `tools/list` answers the catalog that run shows its chooser; `tools/call` is proposed as the
run's next action and the guard decides it, so a refusal comes back as an MCP tool error carrying
its code and owner, never as a call made. The session's end stops the run with its handover.

Over HTTP the server listens on 127.0.0.1 only, answers only requests carrying its bearer token
(`$WARRANT_MCP_TOKEN`, else one made and printed at start), and checks the Host header (DNS
rebinding).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import secrets
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import McpError
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from graph.mcp.session import SessionRun
from graph.runs.reading import RunError
from graph.version import warrant_version

OpenSession = Callable[[], SessionRun]
"""Admits the scenario again and starts a session's run (a `RunError` when it cannot)."""


@dataclass
class _Session:
    """The run of the MCP session being served, opened at its first request."""

    open: OpenSession
    run: SessionRun | None = None
    failed: str | None = None
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def get(self) -> SessionRun:
        async with self.lock:
            if self.run is None and self.failed is None:
                try:
                    self.run = await anyio.to_thread.run_sync(self.open)
                except RunError as exc:  # the scenario cannot be admitted now
                    self.failed = str(exc)
            if self.run is None:
                raise McpError(
                    types.ErrorData(code=types.INVALID_REQUEST, message=str(self.failed))
                )
            return self.run

    async def close(self) -> None:
        if self.run is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.run.close)


_SESSION: contextvars.ContextVar[_Session] = contextvars.ContextVar("warrant_mcp_session")


class GovernedServer(Server[Any, Any]):
    """The low-level MCP server, with a run per session: `run` serves one session."""

    def __init__(self, name: str, open_session: OpenSession) -> None:
        super().__init__(name, version=warrant_version())
        self.open_session = open_session
        self.list_tools()(self._list_tools)  # type: ignore[no-untyped-call]  # the SDK leaves it untyped
        self.call_tool(validate_input=False)(self._call_tool)  # the guard validates, and records

    async def run(self, *args: Any, **kwargs: Any) -> None:
        session = _Session(self.open_session)
        token = _SESSION.set(session)
        try:
            await super().run(*args, **kwargs)
        finally:
            _SESSION.reset(token)
            await session.close()

    async def _list_tools(self) -> list[types.Tool]:
        run = await _SESSION.get().get()
        catalog = await anyio.to_thread.run_sync(run.catalog)
        return [
            types.Tool(
                name=entry["name"], description=entry["description"], inputSchema=entry["args"]
            )
            for entry in catalog
        ]

    async def _call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        run = await _SESSION.get().get()
        result = await anyio.to_thread.run_sync(run.call, name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            structuredContent=result.content,
            isError=result.is_error,
        )


async def serve_stdio(server: GovernedServer) -> None:
    """One session over this process's stdin and stdout."""
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(server: GovernedServer, port: int, token: str) -> Starlette:
    """Streamable HTTP at `/mcp`, one run per session, behind the bearer `token`."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"],
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=security)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route("/mcp", endpoint=_Gated(manager, token))], lifespan=lifespan)


@dataclass(frozen=True)
class _Gated:
    """The session manager behind the bearer token (an ASGI app: Starlette routes to it as is)."""

    manager: StreamableHTTPSessionManager
    token: str

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if not secrets.compare_digest(given, f"Bearer {self.token}".encode()):
            refused = PlainTextResponse("a bearer token is required", status_code=401)
            await refused(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


def serve_http(server: GovernedServer, port: int, token: str) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM); every open session's run is stopped with its
    handover before the process exits."""
    config = uvicorn.Config(
        http_app(server, port, token), host="127.0.0.1", port=port, log_level="warning"
    )
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises the signal again once stopped
        uvicorn.Server(config).run()


def quiet_sdk_logs() -> None:
    """The SDK logs protocol chatter on stderr (a tool "not listed, no validation" where the guard
    validates every call; a closed stream's traceback when a client ends its session): what a
    call became is in the run's ledger, not there."""
    logging.getLogger("mcp").setLevel(logging.CRITICAL)


def told(line: str) -> None:
    """A line on stderr: stdout belongs to the protocol over stdio."""
    print(line, file=sys.stderr, flush=True)
