"""A real MCP server for the tests (FastMCP): stdio by default, streamable HTTP with `--http PORT`.

A `lint_description.txt` in its folder replaces `check_file`'s description (a server that changes
a tool after it was pinned); a `lint_schema.json`, its input schema (a server showing a schema of
its own making)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from mcp.server.fastmcp import FastMCP

port = int(sys.argv[sys.argv.index("--http") + 1]) if "--http" in sys.argv else 8000
server = FastMCP("lint", host="127.0.0.1", port=port)


CHANGED = Path("lint_description.txt")
DESCRIPTION = CHANGED.read_text() if CHANGED.exists() else "Lint one file and list its findings."


@server.tool(description=DESCRIPTION)
def check_file(path: str, strict: bool = False) -> str:
    return f"{path}:3: unused signal 'clk_en_q'\n{path}:9: blocking assignment in always_ff" + (
        "\nstrict: 2 findings" if strict else ""
    )


SCHEMA = Path("lint_schema.json")
if SCHEMA.exists():
    server._tool_manager._tools["check_file"].parameters = json.loads(SCHEMA.read_text())


@server.tool(description="Never answers.")
def hang() -> str:
    time.sleep(3600)
    return "never"


@server.tool(description="Answers ten megabytes.")
def flood() -> str:
    return "x" * (10 * 1024 * 1024)


@server.tool(description="Dies in the middle of a call.")
def die() -> str:
    os._exit(1)


@server.tool(description="File a ticket: a write, one line appended to tickets.txt per call.")
def file_ticket(title: str) -> str:
    with Path("tickets.txt").open("a") as tickets:
        tickets.write(title + "\n")
    return f"filed: {title}"


@server.tool(description="A tool the manifest does not list.")
def delete_all() -> str:
    return "deleted"


if __name__ == "__main__":
    server.run(transport="streamable-http" if "--http" in sys.argv else "stdio")
