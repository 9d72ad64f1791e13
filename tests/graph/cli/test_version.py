"""`warrant --version` and the MCP server's own version are the package's, read from its metadata
(issue 55): the reference is `pyproject.toml`'s `version`, read apart with `tomllib`."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.cli_process import WARRANT, warrant

ROOT = Path(__file__).resolve().parents[3]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_warrant_version_prints_the_package_version(tmp_path):
    shown = warrant("--version", cwd=tmp_path, subprocess_=True)
    assert (shown.returncode, shown.stdout) == (0, f"warrant {VERSION}\n")
    assert "--version" in warrant("--help", cwd=tmp_path).stdout


def test_the_mcp_server_names_warrant_and_its_version_not_the_sdks(tmp_path):
    parameters = StdioServerParameters(
        command=WARRANT,
        args=["mcp", "serve", "R42", "--db", str(tmp_path / "w.sqlite"), "--quiet"],
        cwd=str(tmp_path),
        env={**os.environ, "WARRANT_DB": ""},
    )

    async def initialized() -> tuple[str, str]:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            info = (await session.initialize()).serverInfo
            return info.name, info.version

    name, version = anyio.run(initialized)
    assert version == VERSION and name.startswith("warrant")
