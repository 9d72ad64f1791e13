"""Listing and calling an MCP server's tools, within a time limit and a size cap.

The `mcp` SDK's client session, over stdio (the manifest's `command`, started in the manifest's
folder with the SDK's default environment: no secrets of the caller's) or streamable HTTP (`url`).
A server that cannot be started, hangs past the limit or breaks the protocol is `McpUnavailable`,
one line; a result is text (non-text content named, not decoded), its sha256 over everything the
server sent, and no more than `cap_bytes` of it kept.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from scenario.mcp import McpServer, schema_digest

if TYPE_CHECKING:  # the SDK is loaded by a call to a server, not by importing the catalog
    from mcp import ClientSession

_Result = TypeVar("_Result")


class McpUnavailable(RuntimeError):
    """The server could not be used for this request (one line, naming the server)."""


class McpTimedOut(McpUnavailable):
    """The server did not answer within the request's limit."""


@dataclass(frozen=True)
class Discovered:
    """A tool as its server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]

    @property
    def digest(self) -> str:
        return schema_digest(self.description, self.input_schema)


@dataclass(frozen=True)
class Called:
    """A call's result: the text kept (at most the cap), whether the server said it failed, and
    the size and sha256 of everything it sent."""

    text: str
    is_error: bool
    size: int
    sha256: str
    truncated: bool


def discover(server: McpServer, root: Path, timeout_s: float) -> list[Discovered]:
    """The tools `server` lists (every page)."""

    async def listing(session: ClientSession) -> list[Discovered]:
        found: list[Discovered] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
            found += [
                Discovered(tool.name, tool.description or "", dict(tool.inputSchema))
                for tool in page.tools
            ]
            cursor = page.nextCursor
            if not cursor:
                return found

    return _run(server, root, timeout_s, listing, "list its tools")


def call(
    server: McpServer,
    root: Path,
    tool: str,
    args: dict[str, Any],
    timeout_s: float,
    cap_bytes: int,
) -> Called:
    """Call `tool` with `args` (already checked against its pinned schema)."""

    from mcp.types import TextContent

    async def calling(session: ClientSession) -> Called:
        result = await session.call_tool(tool, args)
        parts = [
            item.text if isinstance(item, TextContent) else f"[{item.type} content, not shown]"
            for item in result.content
        ]
        whole = "\n".join(parts).encode("utf-8", "surrogatepass")
        kept = whole[:cap_bytes].decode("utf-8", "ignore")
        return Called(
            kept,
            bool(result.isError),
            len(whole),
            hashlib.sha256(whole).hexdigest(),
            len(whole) > cap_bytes,
        )

    return _run(server, root, timeout_s, calling, f"call {tool}")


def _run(
    server: McpServer,
    root: Path,
    timeout_s: float,
    work: Callable[[ClientSession], Awaitable[_Result]],
    doing: str,
) -> _Result:
    import anyio

    async def session_work() -> _Result:
        with anyio.fail_after(timeout_s):
            async with _session(server, root) as session:
                return await work(session)

    try:
        return anyio.run(session_work)
    except TimeoutError:
        raise McpTimedOut(
            f"mcp server {server.name!r} did not {doing} within {timeout_s:g}s"
        ) from None
    except McpUnavailable:
        raise
    except Exception as exc:  # the transport's and the protocol's errors, as one line
        raise McpUnavailable(
            f"mcp server {server.name!r} could not {doing}: {_first(exc)}"
        ) from None


@asynccontextmanager
async def _session(server: McpServer, root: Path) -> AsyncIterator[ClientSession]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if server.command is not None:
        command, *args = server.command
        parameters = StdioServerParameters(command=command, args=args, cwd=str(root))
        with Path(os.devnull).open("w") as quiet:  # the server's own stderr is not ours to show
            async with (
                stdio_client(parameters, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session
        return
    assert server.url is not None  # the model requires one of the two
    async with (
        streamable_http_client(server.url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _first(exc: BaseException) -> str:
    """The first line of an error, through the task groups the SDK wraps errors in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
