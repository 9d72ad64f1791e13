"""An MCP tool's input schema: pinnable only when self-contained and linear-time, and checked by
a validator that never fetches and never backtracks.

At pin and admission (`schema_problem`) a schema is refused, in one line, when it is not JSON
Schema (Draft 2020-12); when a `$ref` is anything but a `#/…` pointer to a place within it, or it
has a `$dynamicRef`/`$recursiveRef`, or an `$id` below its root (the pin covers the schema, not what
a URL serves); when a `pattern` or a `patternProperties` key is not RE2 syntax (backreferences,
lookaround); or when it pairs `unevaluatedProperties` with `patternProperties` (jsonschema would
match those keys with Python's backtracking `re`). Deny by default: every string `$ref`, `$id` or
`pattern` anywhere in the document counts, even inside an example.

At the guard (`first_schema_error`) the validator resolves references in a `referencing.Registry`
with no retrieve (the schema itself and the JSON Schema meta-schemas): a reference it does not hold
is a refusal naming it, never a request nor an exception. `pattern`, `patternProperties` and
`additionalProperties` match with RE2, in time linear in the input.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

import re2
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.exceptions import PointerToNowhere, Unresolvable

NOT_FETCHED = "(nothing is fetched)"


class UncheckablePattern(ValueError):
    """A pattern RE2 cannot compile: `pattern` and RE2's reason."""

    def __init__(self, pattern: str, why: str) -> None:
        super().__init__(pattern, why)
        self.pattern = pattern
        self.why = why


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # the reason is ours to report, in one line
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0] if exc.args else "not RE2 syntax"
        raise UncheckablePattern(
            pattern, why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
        ) from None


def linear_search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches anywhere in `text`, on RE2; raises `UncheckablePattern`."""
    return _compiled(pattern).search(text) is not None


# -- at pin and admission ------------------------------------------------------------------------


def schema_problem(schema: dict[str, Any]) -> str | None:
    """What makes `schema` unfit to pin, completing "its input schema …", or None."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"is not JSON Schema: {exc.message[:300]}"
    if reason := not_self_contained(schema):
        return f"is not self-contained: {reason}"
    for pattern in _patterns(schema):
        try:
            _compiled(pattern)
        except UncheckablePattern as exc:
            return f"has a pattern RE2 cannot run in linear time: {pattern[:200]!r} ({exc.why})"
    if pairs_unevaluated_with_patterns(schema):
        return "pairs unevaluatedProperties with patternProperties, which is not checked"
    return None


def not_self_contained(schema: dict[str, Any]) -> str | None:
    """The first reference of `schema` to anything outside it, or None."""
    for node, at_root in _objects(schema):
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref != "#" and not ref.startswith("#/"):
                return f"$ref {ref[:200]!r} is not a '#/…' pointer within it {NOT_FETCHED}"
            if not _points_within(schema, ref):
                return f"$ref {ref[:200]!r} points at nothing within it"
        for keyword in ("$dynamicRef", "$recursiveRef"):
            if isinstance(node.get(keyword), str):
                return f"{keyword} {node[keyword][:200]!r} is not allowed"
        if not at_root and isinstance(node.get("$id"), str):
            return f"$id {node['$id'][:200]!r} below its root is not allowed"
    return None


def pairs_unevaluated_with_patterns(schema: dict[str, Any]) -> bool:
    """Whether `schema` has both `unevaluatedProperties` and `patternProperties` somewhere."""
    objects = [node for node, _ in _objects(schema)]
    return any("unevaluatedProperties" in node for node in objects) and any(
        isinstance(node.get("patternProperties"), dict) for node in objects
    )


def _objects(schema: object) -> Iterator[tuple[dict[str, Any], bool]]:
    """Every JSON object in `schema` (a schema or not), with whether it is the root."""
    stack: list[tuple[object, bool]] = [(schema, True)]
    while stack:
        node, at_root = stack.pop()
        if isinstance(node, dict):
            yield node, at_root
            stack.extend((value, False) for value in reversed(node.values()))
        elif isinstance(node, list):
            stack.extend((value, False) for value in reversed(node))


def _patterns(schema: dict[str, Any]) -> Iterator[str]:
    for node, _ in _objects(schema):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        if isinstance(node.get("patternProperties"), dict):
            yield from node["patternProperties"]


def _points_within(schema: dict[str, Any], ref: str) -> bool:
    """Whether the JSON pointer of `ref` (`#` or `#/…`) names a place in `schema`."""
    node: object = schema
    for escaped in unquote(ref[1:]).split("/")[1:]:
        token = escaped.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


# -- at the guard ---------------------------------------------------------------------------------


def first_schema_error(instance: Any, schema: dict[str, Any]) -> str | None:
    """The first reason `schema` refuses `instance` (one line), or None; never fetches, never
    backtracks, never raises for what the schema holds."""
    if pairs_unevaluated_with_patterns(schema):
        return "its pinned schema pairs unevaluatedProperties with patternProperties, which is not checked"
    try:
        errors = sorted(linear_validator(schema).iter_errors(instance), key=lambda e: e.path)
    except Unresolvable as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, Unresolvable) else exc
        ref = f"#{cause.ref}" if isinstance(cause, PointerToNowhere) else str(cause.ref)
        return f"its pinned schema's $ref {ref[:200]!r} is not within it {NOT_FETCHED}"
    except UncheckablePattern as exc:
        return f"its pinned schema's pattern {exc.pattern[:200]!r} is not RE2 syntax ({exc.why})"
    except RecursionError:
        return "its pinned schema refers to itself without end"
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(part) for part in first.absolute_path) or "arguments"
    return f"{where}: {first.message[:300]}"


def linear_validator(schema: dict[str, Any]) -> Validator:
    """A Draft 2020-12 validator of `schema` that resolves references within it (and the
    meta-schemas) only, and matches patterns with RE2."""
    validator: Validator = _LinearValidator(schema, registry=Registry())
    return validator


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not linear_search(pattern, str(instance)):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if linear_search(pattern, str(key)):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    if not isinstance(instance, dict):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(linear_search(p, str(key)) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(extra) for extra in sorted(extras))
        yield ValidationError(f"Additional properties are not allowed ({names} unexpected)")


_LinearValidator = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)
