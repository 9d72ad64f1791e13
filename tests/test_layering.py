"""The seams: guards/ and tools/ are readable and testable alone."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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


# What `guards/` may not import; `tools/` stands a floor lower and may not import `guards/` either.
ABOVE_GUARDS = {
    "langgraph",
    "langchain",
    "langchain_core",
    "langchain_openai",
    "ledger",
    "nodes",
    "graph",
}


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("guards", ABOVE_GUARDS), ("tools", ABOVE_GUARDS | {"guards"})],
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


SERVING_MODULES = {"uvicorn", "anyio", "server", "manager"}
"""`uvicorn.run` and `uvicorn.Server(…).run` serve the web inbox and `warrant mcp serve`'s HTTP;
`anyio.run` its event loop; `server.run(…)` an MCP server's session and `manager.run()` its HTTP
session manager (`graph/mcp/server.py`, whose `super().run` is the SDK's): a server's run, not a
tool's."""


def _serving(target: ast.expr) -> bool:
    """`uvicorn` itself, or a server it made (`uvicorn.Server(config)`); an event loop, an MCP
    server's session loop or the base class's (`super().run`)."""
    if isinstance(target, ast.Call):
        if isinstance(target.func, ast.Name) and target.func.id == "super":
            return True
        target = target.func.value if isinstance(target.func, ast.Attribute) else target.func
    return isinstance(target, ast.Name) and target.id in SERVING_MODULES


def test_only_the_execute_node_calls_a_tool_run_function():
    callers = set()
    for package in ("nodes", "graph"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "run"
                    and not _serving(node.func.value)
                ):
                    callers.add(str(path.relative_to(ROOT)))
    assert callers == {"nodes/execute.py"}


def _string_literals(path: Path) -> set[str]:
    """String constants of a module that are values: not docstrings, and not field names (a
    dict's keys, a subscript, `.get`'s first argument)."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.body and isinstance(node.body[0], ast.Expr):
                names.add(id(node.body[0].value))
        elif isinstance(node, ast.Dict):
            names |= {id(key) for key in node.keys if key is not None}
        elif isinstance(node, ast.Subscript):
            names.add(id(node.slice))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args:
            names.add(id(node.args[0]))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in names
    }


def test_every_code_status_and_outcome_is_named_through_the_contract():
    from contract.codes import EventKind, InteractionKind, Outcome, RefusalCode, Status

    vocabulary = {*RefusalCode, *Status, *Outcome, *EventKind, *InteractionKind}
    vocabulary -= {"stop", "end", "execute", "handover"}
    # Also an action's kind, the graph's end and two nodes' names.
    offenders = {
        str(path.relative_to(ROOT)): sorted(_string_literals(path) & vocabulary)
        for package in ("scenario", "tools", "guards", "ledger", "nodes", "graph")
        for path in sorted((ROOT / package).rglob("*.py"))
        if _string_literals(path) & vocabulary
    }
    assert offenders == {}


def test_the_contract_imports_nothing_of_the_project():
    project = {"graph", "nodes", "ledger", "guards", "tools", "scenario", "lab"}
    assert {
        path: names & project
        for path, names in imported_modules("contract").items()
        if names & project
    } == {}


def test_the_grant_stands_on_the_contract_alone():
    """`scenario/` (manifests, the registry, families, digests, reading) is the grant's floor:
    tools and guards read it, and it imports nothing of the project above `contract/`."""
    above = {"graph", "nodes", "guards", "tools", "lab", "ledger"}
    assert {
        path: names & above for path, names in imported_modules("scenario").items() if names & above
    } == {}


def test_nodes_import_nothing_of_the_graph_above_them():
    """The graph wires the nodes; a node takes the state schema from the contract, so no arrow
    runs back up from `nodes/` to `graph/`."""
    assert {
        path: names & {"graph"}
        for path, names in imported_modules("nodes").items()
        if names & {"graph"}
    } == {}


def test_the_ledger_imports_nothing_of_the_nodes_or_the_graph():
    """`ledger/` (the run's record: layout, commits, reads, seals) stands below the nodes; what
    it needs from above (`received`, `shown_notes`) its caller hands in."""
    assert {
        path: names & {"nodes", "graph"}
        for path, names in imported_modules("ledger").items()
        if names & {"nodes", "graph"}
    } == {}


def _project_imports(path: Path) -> set[str]:
    """The project modules a module imports (`ledger.store`, `guards.seal`, …)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_no_import_cycle():
    packages = ("contract", "scenario", "tools", "guards", "ledger", "nodes", "graph")
    modules = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
        for package in packages
        for path in (ROOT / package).rglob("*.py")
    }
    graph = {name: _project_imports(path) & modules.keys() for name, path in modules.items()}
    cycles = []

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            cycles.append([*trail[trail.index(name) :], name])
            return
        for imported in sorted(graph[name]):
            if imported not in done:
                visit(imported, [*trail, name])
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        visit(name, [])
    assert cycles == []


def test_the_literal_scan_finds_a_code_written_as_a_string(tmp_path):
    module = tmp_path / "emitter.py"
    module.write_text(
        '"""A docstring naming record_changed is prose."""\n'
        'def read(record):\n    raise RecordRefusal("record_changed", record["record_changed"])\n'
    )
    assert _string_literals(module) == {"record_changed"}


def test_the_model_stack_is_reached_only_through_the_chooser_package():
    stack = {"openai", "langchain_openai"}
    for name in ("route", "transport", "projector", "cassette", "adversary"):
        assert (ROOT / "nodes" / "choosers" / f"{name}.py").is_file()
    outside = {
        path: names & stack
        for package in ("ledger", "nodes", "graph", "guards", "tools")
        for path, names in imported_modules(package).items()
        if names & stack and not path.startswith("nodes/choosers/")
    }
    assert outside == {}


FACES = {"cli", "web", "mcp", "server"}
"""The rooms of graph/ that people and clients meet: above the services."""
SERVICES = {"runs", "delivery", "evaluation", "entry", "people", "present"}
"""The rooms of graph/ the faces use; below them the loop (build, governed, children, …)."""


def _graph_floor(room: str) -> int:
    return 2 if room in FACES else 1 if room in SERVICES else 0


def _graph_imports() -> dict[str, set[str]]:
    """Each graph/ module's room (`cli`, `build`, …) → the graph rooms it imports, by whole name."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "graph").rglob("*.py")):
        room = path.relative_to(ROOT / "graph").parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            rooms = {name.split(".")[1] for name in names if name.startswith("graph.")}
            found.setdefault(str(path.relative_to(ROOT)), set()).update(rooms - {room})
    return found


def test_graph_faces_stand_above_services_above_the_loop():
    offenders = {
        (path, room)
        for path, rooms in _graph_imports().items()
        for room in rooms
        if _graph_floor(room) > _graph_floor(Path(path).parts[1].removesuffix(".py"))
    }
    assert offenders == set()


def test_the_run_library_imports_no_face_and_not_delivery():
    offenders = {
        (path, room)
        for path, rooms in _graph_imports().items()
        if path.startswith("graph/runs/")
        for room in rooms & (FACES | {"delivery"})
    }
    assert offenders == set()
