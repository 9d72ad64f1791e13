"""A scenario folder with the tests' MCP server beside its manifest (`lint_server.py`)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parent / "lint_server.py"


def lint_folder(folder: Path, manifest: str) -> Path:
    """`folder` with the server, a build log and `manifest` (as `m.toml`); the manifest's path."""
    shutil.copy(SERVER, folder / "lint_server.py")
    (folder / "build.log").write_text("UVM_ERROR @ 10: lint failed\n")
    (folder / "m.toml").write_text(manifest)
    return folder / "m.toml"


def lint_manifest(top: str, tools: str, *, record: str = "", server: str = "") -> str:
    """A manifest reading the build log with the lint server: `top` (its id, goal, budget …), the
    log's record (with `record`'s lines), the server (with `server`'s) and its `tools` tables."""
    return f"""{top}
[[record]]
id = "build_log"
kind = "log"
path = "build.log"
{record}
[[mcp]]
name = "lint"
command = ["{sys.executable}", "lint_server.py"]
{server}
{tools}"""
