"""Every third-party library the package imports is one it declares: a wheel installed from
pyproject.toml alone must not rely on whatever else happened to be installed beside it.

The imports are read with `ast` from every module of the package's folders (those inside functions
too: a lazy import is still a dependency), each mapped to the distribution that installs its files
(`importlib.metadata`; a namespace package such as `langgraph` or `opentelemetry` is shared by
several distributions, so a module is matched by its own file). The declared list is
`[project].dependencies`, read as text so that each requirement's comment can be checked as well.
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = tuple(
    pattern.removesuffix("*")
    for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
)
"""The project's own packages, as the wheel finds them."""
SERVE_EXTRA = {
    "langgraph_runtime_pg": {"graph/server/replica.py", "graph/server/serve.py"},
    "langgraph_api": {
        "graph/server/control.py",
        "graph/server/crons.py",
        "graph/server/replica.py",
    },
}
"""The `[serve]` extra's runtime and server: imported inside the functions that run under them
(`.venv-serve`, or the running `langgraph dev`), and only in these modules."""
NOT_IMPORTED = {
    "psycopg-binary": "",  # never a name: psycopg[binary] is the requirement
    "python-multipart": "starlette parses the web app's forms with it (graph/web/)",
}
"""Declared distributions no module imports by name, and why they are declared all the same."""


def normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them (`Jinja2` is `jinja2`, `google_re2` is
    `google-re2`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def imports(path: Path) -> Iterator[str]:
    """The absolute modules `path` imports; `from a.b import c` yields `a.b.c` then `a.b` (c may
    be a submodule, which is what names its distribution in a namespace package)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                yield f"{node.module}.{alias.name}"
            yield node.module


@cache
def files_of(distribution: str) -> frozenset[str]:
    return frozenset(str(file) for file in metadata.distribution(distribution).files or ())


@cache
def importable_from() -> dict[str, list[str]]:
    """Each top-level importable name → the distributions that install it (read once: it walks
    every installed distribution's files)."""
    return metadata.packages_distributions()


def distributions_of(module: str) -> set[str]:
    """The distributions whose files make `module` (its longest importable prefix): one, or none
    when it is not installed here."""
    parts = module.split(".")
    candidates = importable_from().get(parts[0], [])
    if len(set(candidates)) <= 1:
        return {normalized(name) for name in candidates}
    for length in range(len(parts), 0, -1):
        stem = "/".join(parts[:length])
        owners = {
            normalized(name)
            for name in candidates
            if {f"{stem}.py", f"{stem}/__init__.py"} & files_of(name)
        }
        if owners:
            return owners
    return {normalized(name) for name in candidates}


def third_party_imports() -> dict[str, set[str]]:
    """Each third-party module the package imports, with the files (from the root) that do."""
    first_party = set(PACKAGE_DIRS) | {"__future__"}
    found: dict[str, set[str]] = {}
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for module in imports(path):
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in first_party:
                    continue
                found.setdefault(module, set()).add(str(path.relative_to(ROOT)))
    return found


def dependency_lines() -> list[tuple[str, str]]:
    """`[project].dependencies` as (requirement, comment) pairs, read from the file's text."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    body = text.split("\ndependencies = [\n", 1)[1].split("\n]\n", 1)[0]
    pairs = []
    for line in body.splitlines():
        if line.strip().startswith("#"):  # a note on the lines below it
            continue
        match = re.fullmatch(r'\s*"([^"]+)",\s*(?:#\s*(.*))?', line)
        assert match, f"pyproject.toml: a dependency line this test cannot read: {line!r}"
        pairs.append((match[1], match[2] or ""))
    parsed = tomllib.loads(text)["project"]["dependencies"]
    assert [requirement for requirement, _ in pairs] == parsed  # every line, read in order
    return pairs


def declared() -> set[str]:
    names = set()
    for requirement, _ in dependency_lines():
        name, extras = re.match(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?", requirement).groups()  # type: ignore[union-attr]
        names.add(normalized(name))
        if extras and normalized(name) == "psycopg" and "binary" in extras:
            names.add("psycopg-binary")
    return names


def test_every_imported_third_party_library_is_declared():
    wanted = declared()
    missing: dict[str, set[str]] = {}
    unknown: dict[str, set[str]] = {}
    for module, files in third_party_imports().items():
        top = module.split(".")[0]
        if top in SERVE_EXTRA:
            outside = files - SERVE_EXTRA[top]
            assert not outside, (
                f"{top} (the [serve] extra) is imported outside its modules: {outside}"
            )
            continue
        owners = distributions_of(module)
        if not owners:
            # `from a.b import c` also yields `a.b.c`, which need not be a module: judged by `a.b`
            if "." in module and distributions_of(module.rsplit(".", 1)[0]):
                continue
            unknown[module] = files
        elif not owners & wanted:
            for owner in owners:
                missing.setdefault(owner, set()).update(files)
    assert not unknown, f"imported, and installed by no distribution here: {unknown}"
    assert not missing, "imported but not in [project].dependencies: " + "; ".join(
        f"{name} ({', '.join(sorted(files)[:3])})" for name, files in sorted(missing.items())
    )


def test_every_declared_dependency_is_imported_or_says_why_not():
    used = set()
    for module in third_party_imports():
        used |= distributions_of(module)
    unused = declared() - used - set(NOT_IMPORTED)
    assert not unused, f"declared in [project].dependencies but imported nowhere: {sorted(unused)}"


def test_every_dependency_has_a_lower_bound_and_says_where_it_is_used():
    for requirement, comment in dependency_lines():
        assert re.search(r"(>=|==|~=)\s*\d", requirement), f"{requirement!r} has no lower bound"
        assert comment, f"{requirement!r} has no comment saying where it is used"


def test_the_checked_lists_are_not_empty():
    """The scan sees the package (a wrong root would pass every check above vacuously)."""
    modules = third_party_imports()
    assert {"langgraph.graph", "pydantic", "psycopg"} <= set(modules)
    assert {"langgraph", "langgraph-checkpoint-postgres", "pydantic"} <= declared()
