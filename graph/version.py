"""Warrant's own version, from the installed package's metadata: what `warrant --version` prints
and the MCP server names itself with (never a dependency's version)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def warrant_version() -> str:
    try:
        return version("warrant")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"
