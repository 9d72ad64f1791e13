"""A scenario folder with the tests' MCP server beside its manifest (`lint_server.py`)."""

from __future__ import annotations

import shutil
from pathlib import Path

SERVER = Path(__file__).resolve().parent / "lint_server.py"


def lint_folder(folder: Path, manifest: str) -> Path:
    """`folder` with the server, a build log and `manifest` (as `m.toml`); the manifest's path."""
    shutil.copy(SERVER, folder / "lint_server.py")
    (folder / "build.log").write_text("UVM_ERROR @ 10: lint failed\n")
    (folder / "m.toml").write_text(manifest)
    return folder / "m.toml"
