"""The seams: guards/ and tools/ are readable and testable alone."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(package: str) -> dict[str, set[str]]:
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        (
            "guards",
            {"langgraph", "langchain", "langchain_core", "langchain_openai", "nodes", "graph"},
        ),
        (
            "tools",
            {
                "langgraph",
                "langchain",
                "langchain_core",
                "langchain_openai",
                "nodes",
                "graph",
                "guards",
            },
        ),
    ],
)
def test_package_imports_stay_inside_their_layer(package, forbidden):
    offenders = {
        path: names & forbidden
        for path, names in imported_modules(package).items()
        if names & forbidden
    }
    assert offenders == {}


def test_the_guard_never_calls_a_tool_run_function():
    for path in (ROOT / "guards").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr != "run", f"{path} calls .run()"


def test_only_the_execute_node_calls_a_tool_run_function():
    callers = set()
    for package in ("nodes", "graph"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "run"
                ):
                    callers.add(str(path.relative_to(ROOT)))
    assert callers == {"nodes/execute.py"}
