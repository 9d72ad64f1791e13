"""What an `analyze` query reads and calls, decided on DuckDB's own parse tree.

The statement is parsed by DuckDB (`json_serialize_sql`, in an in-memory connection with nothing
attached, external access off) and its tree walked, deny by default: one SELECT; every table a
plain name the call granted, or a CTE the statement defines around it; no table function, no
string or path as a table, no schema or catalog, no `PIVOT`, `DESCRIBE`/`SUMMARIZE`/`SHOW`, time
travel or parameter; every function call one of `tools/analysis/functions.py`. A name is
checked as the parser resolved it, so quoting and case change nothing (`"READ_CSV"(…)`,
`'x'.read_text()`). The sandbox (`tools/analysis/sandbox.py`) stays the boundary behind it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Collection, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tools.analysis.functions import AGGREGATES, ALLOWED_FUNCTIONS, WINDOWS

if TYPE_CHECKING:
    import duckdb

PLAIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""A table or CTE name no replacement scan takes for a file (no dot, no slash)."""
QUERY_NODES = {"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"}
TABLE_REFS = {"BASE_TABLE", "JOIN", "SUBQUERY", "EMPTY", "EXPRESSION_LIST", "TABLE_FUNCTION"}
"""Table references the walk knows; every other (`PIVOT`, `SHOW_REF`, …) is refused."""
MODIFIERS = {
    "ORDER_MODIFIER",
    "LIMIT_MODIFIER",
    "LIMIT_PERCENT_MODIFIER",
    "DISTINCT_MODIFIER",
    "ORDER_DEFAULT",
    "ASCENDING",
    "DESCENDING",
}
EXPRESSIONS = {
    "BETWEEN",
    "CASE",
    "CAST",
    "COLLATE",
    "COLUMN_REF",
    "COMPARISON",
    "CONJUNCTION",
    "CONSTANT",
    "FUNCTION",
    "LAMBDA",
    "LAMBDA_REF",
    "OPERATOR",
    "POSITIONAL_REFERENCE",
    "STAR",
    "SUBQUERY",
    "TYPE",
    "WINDOW",
}
"""Expression classes a query may use; a `PARAMETER` (no value is ever bound) or any class a
later DuckDB adds is refused until it is looked at."""

_PARSING = threading.Lock()
_PARSERS: list[duckdb.DuckDBPyConnection] = []
"""The one parsing connection, made at first use (importing the catalog starts no engine)."""


class QueryProblem(ValueError):
    """Why a query is refused, on one line, naming what it reaches."""


def statement_tree(query: str) -> dict[str, Any]:
    """DuckDB's parse tree of the one SELECT `query` holds."""
    import duckdb  # here: importing the catalog loads no engine

    with _PARSING:
        if not _PARSERS:
            parser = duckdb.connect(":memory:", config={"enable_external_access": False})
            parser.execute("SET lock_configuration = true")
            _PARSERS.append(parser)
        row = _PARSERS[0].execute("select json_serialize_sql(?::varchar)", [query]).fetchone()
    tree: dict[str, Any] = json.loads(row[0]) if row else {"error": True}
    if tree.get("error"):
        reason = str(tree.get("error_message") or "no parse tree").splitlines()[0]
        raise QueryProblem(f"not a SELECT the guard can check: {reason}")
    statements: list[dict[str, Any]] = tree.get("statements") or []
    if len(statements) != 1:
        raise QueryProblem(f"one statement only ({len(statements)} given)")
    node: dict[str, Any] = statements[0]["node"]
    return node


def check_query(query: str, tables: Collection[str]) -> None:
    """A `QueryProblem` unless every table `query` reads is one of `tables` (or a CTE it
    defines) and every function it calls is allowed."""
    granted = frozenset(name.lower() for name in tables)
    for node, scope in _walk(statement_tree(query)):
        if problem := _problem(node, granted | scope, granted):
            raise QueryProblem(problem)


def _walk(root: dict[str, Any]) -> Iterator[tuple[dict[str, Any], frozenset[str]]]:
    """Every object of the tree, with the CTE names in scope where it stands."""
    stack: list[tuple[Any, frozenset[str]]] = [(root, frozenset())]
    while stack:
        value, scope = stack.pop()
        if isinstance(value, list):
            stack.extend((item, scope) for item in value)
            continue
        if not isinstance(value, dict):
            continue
        scope = scope | _ctes(value)
        yield value, scope
        stack.extend((item, scope) for item in value.values() if isinstance(item, dict | list))


def _ctes(node: Mapping[str, Any]) -> frozenset[str]:
    """The CTE names `node` defines (its `WITH`, a recursive or materialized CTE node); each a
    plain name, else a `QueryProblem`."""
    names = [entry.get("key") for entry in (node.get("cte_map") or {}).get("map") or []]
    if node.get("type") in ("RECURSIVE_CTE_NODE", "CTE_NODE"):  # a type may be an object
        names.append(node.get("ctename") or node.get("cte_name"))
    for name in names:
        if not isinstance(name, str) or not PLAIN_NAME.match(name):
            raise QueryProblem(f"the CTE name {_shown(name)} is not a plain name")
    return frozenset(str(name).lower() for name in names)


def _problem(node: Mapping[str, Any], readable: frozenset[str], granted: frozenset[str]) -> str:
    """Why `node` is refused, or ''."""
    kind = node.get("class")
    if isinstance(kind, str):
        return _expression_problem(node, kind)
    kind = node.get("type")
    if not isinstance(kind, str) or kind.endswith("_TYPE_INFO"):
        return ""
    if kind == "BASE_TABLE":
        return _table_problem(node, readable, granted)
    if kind == "TABLE_FUNCTION":
        function = node.get("function") or {}
        return f"{_qualified(function, 'function_name')}() is not allowed: a query reads only its tables"
    if kind in QUERY_NODES | TABLE_REFS | MODIFIERS:
        return ""
    hint = " (DESCRIBE, SUMMARIZE, SHOW)" if kind == "SHOW_REF" else ""
    return f"{kind} is not allowed{hint}: a query is a SELECT over its tables"


def _expression_problem(node: Mapping[str, Any], kind: str) -> str:
    if kind == "PARAMETER":
        return "a parameter is not allowed: the query is run as written"
    if kind not in EXPRESSIONS:
        return f"a {kind} expression is not allowed"
    if kind not in {"FUNCTION", "WINDOW"}:
        return ""
    name = str(node.get("function_name") or "")
    allowed = WINDOWS | AGGREGATES if kind == "WINDOW" else ALLOWED_FUNCTIONS
    if _path(node, "function_name") != [name] or name.lower() not in allowed:
        return (
            f"{_qualified(node, 'function_name')}() is not allowed: a query calls only the pure"
            " functions of its allowlist (tools/analysis/functions.py)"
        )
    return ""


def _table_problem(
    node: Mapping[str, Any], readable: frozenset[str], granted: frozenset[str]
) -> str:
    name = str(node.get("table_name") or "")
    path = _path(node, "table_name")
    if path != [name] or not PLAIN_NAME.match(name) or name.lower() not in readable:
        given = ", ".join(sorted(granted)) or "none"
        return (
            f"the table {_shown('.'.join(path))} is not one of the call's tables ({given}):"
            " a query reads only the tables it is given"
        )
    if node.get("at_clause"):
        return f"{name} AT (…) is not allowed: a table is read as it was given"
    return ""


def _path(node: Mapping[str, Any], name_key: str) -> list[str]:
    """The name as written: catalog, schema and name, the empty parts left out."""
    keys = ("catalog_name", "schema_name") if name_key == "table_name" else ("catalog", "schema")
    parts = [node.get(key) for key in (*keys, name_key)]
    return [str(part) for part in parts if part]


def _qualified(node: Mapping[str, Any], name_key: str) -> str:
    """A function's name as DuckDB resolves it (whatever its case), with any schema."""
    return ".".join(_path(node, name_key)).lower() or "?"


def _shown(name: object) -> str:
    text = str(name)
    return repr(text if len(text) <= 80 else text[:77] + "…")
