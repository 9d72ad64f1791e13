"""What a command's start imports: only what it runs (issue 55). A heavy library loaded at start is
paid by every command, dozens of times a day; these checks keep it from coming back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HEAVY = (
    "matplotlib",
    "duckdb",
    "mcp",
    "starlette",
    "uvicorn",
    "jinja2",
    "sse_starlette",
    "opentelemetry",
    "langsmith",
)
"""Libraries a command loads where it uses them, never at the command line's start."""

PROBE = """
import json, sys
sys.argv = ["warrant", *json.loads(sys.argv[1])]
from graph.cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted({name.split(".")[0] for name in sys.modules})), file=sys.stderr)
"""


def loaded(args: list[str], cwd: Path) -> set[str]:
    """The top-level packages a `warrant ARGS` process had imported when it ended."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "XDG_DATA_HOME": str(cwd / "data"),
            "PYTHONPATH": str(ROOT),
        },
    )
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def test_help_imports_no_heavy_library(tmp_path: Path) -> None:
    modules = loaded(["--help"], tmp_path)
    assert "typer" in modules  # the probe saw the command run
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    assert "langgraph" not in modules  # a command's help needs no graph


@pytest.mark.parametrize("args", [["run", "--help"], ["triage", "--help"], ["version"]])
def test_every_help_is_light(tmp_path: Path, args: list[str]) -> None:
    modules = loaded(args if args != ["version"] else ["--version"], tmp_path)
    assert not modules & {*HEAVY, "langgraph", "langchain_core"}, sorted(modules & {*HEAVY})
