"""Values as every store keeps them: a tool's result made canonical before it is sealed.

Why: a receipt is sealed as the executor wrote it and checked as a store gives it back, so each of
its values must come back from memory, SQLite and PostgreSQL exactly as written, or the run ends
`state_tampered` (or nothing is written and the run crashes). Some numbers do not come back:

- NaN and ±infinity: JSON has no word for them (SQLite's store writes `null`, PostgreSQL refuses);
- negative zero and floats of 10¹⁶ or more (JSON writes `1e+16`): PostgreSQL gives back `0.0`
  and an integer;
- integers outside signed 64 bits (a DuckDB `sum` is a HUGEINT): no checkpoint holds one.

Each is written as a one-key object naming its kind, with its exact text, which `float` or `int`
reads back to the very value (`plain`):
`{"$float": "NaN" | "Infinity" | "-Infinity" | "-0.0" | "2.7670116110564327e+19"}` and
`{"$int": "27670116110564327421"}`. Every other value is kept as it is (tuples become lists).
What no form keeps exactly — a NUL (no PostgreSQL text holds one) or a lone surrogate (not UTF-8)
in a string, a key that is not a string, an object already shaped like a typed form, anything that
is not JSON data — raises `Unstorable`, which the executor records as the call's failure.
"""

from __future__ import annotations

import math
from typing import Any

FLOAT = "$float"
INT = "$int"
TAGS = frozenset({FLOAT, INT})
INT64 = 1 << 63
LARGEST_PLAIN_FLOAT = 1e16
"""From here on JSON writes a float with an exponent, and PostgreSQL gives back an integer."""
MAX_DEPTH = 64


class Unstorable(ValueError):
    """A value no form keeps exactly: what and where, in one line (no byte of the value)."""


def storable(value: object, where: str = "result") -> Any:
    """`value` as every store keeps it: each number JSON cannot carry exactly in its typed form."""
    return _canonical(value, where, 0, strict=False)


def unkept(value: object, where: str = "value") -> str | None:
    """Why `value` would not be kept as it is (a number needing its typed form included), or
    None: for values recorded as they were given, such as a call's arguments."""
    try:
        _canonical(value, where, 0, strict=True)
    except Unstorable as exc:
        return str(exc)
    return None


def plain(value: object) -> object:
    """The number a typed form stands for; any other value as it is."""
    if isinstance(value, dict) and len(value) == 1:
        ((tag, text),) = value.items()
        if tag == FLOAT and isinstance(text, str):
            return float(text)
        if tag == INT and isinstance(text, str):
            return int(text)
    return value


def shown(value: object) -> str:
    """A value as a person reads it: a typed number as Python writes the number (`nan`, `inf`,
    `-inf`, `-0.0`, `2.7670116110564327e+19`, the integer's digits), as `analyze` shows its rows."""
    return str(plain(value))


def _canonical(value: object, where: str, depth: int, strict: bool) -> Any:
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str) and (problem := text_problem(value)):
            raise Unstorable(f"{problem} in {where}")
        return value
    if isinstance(value, int | float):
        typed = _typed(value)
        if typed is not None and strict:
            raise Unstorable(f"{_named(typed)} in {where}")
        return value if typed is None else typed
    if depth >= MAX_DEPTH:
        raise Unstorable(f"nesting deeper than {MAX_DEPTH} levels in {where}")
    if isinstance(value, list | tuple):
        return [
            _canonical(item, f"{where}[{n}]", depth + 1, strict) for n, item in enumerate(value)
        ]
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in TAGS:
            raise Unstorable(f"an object that reads as a typed number in {where}")
        kept: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise Unstorable(f"a key that is not text ({type(key).__name__}) in {where}")
            if problem := text_problem(key):
                raise Unstorable(f"{problem} in a key of {where}")
            kept[key] = _canonical(item, _member(where, key), depth + 1, strict)
        return kept
    raise Unstorable(f"a value that is not JSON data ({type(value).__name__}) in {where}")


def _typed(number: int | float) -> dict[str, str] | None:
    """The typed form of a number JSON does not carry exactly through every store, else None."""
    if isinstance(number, int):
        if -INT64 <= number < INT64:
            return None
        try:
            return {INT: str(number)}
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            raise Unstorable(f"an integer of about {number.bit_length()} bits") from None
    if math.isnan(number):
        return {FLOAT: "NaN"}
    if math.isinf(number):
        return {FLOAT: "Infinity" if number > 0 else "-Infinity"}
    if number == 0 and math.copysign(1.0, number) < 0:
        return {FLOAT: "-0.0"}
    if abs(number) >= LARGEST_PLAIN_FLOAT:
        return {FLOAT: repr(number)}
    return None


def _named(typed: dict[str, str]) -> str:
    ((tag, text),) = typed.items()
    if tag == INT:
        return f"an integer beyond 64 bits ({len(text.lstrip('-'))} digits)"
    return {"NaN": "NaN", "Infinity": "an infinity", "-Infinity": "an infinity"}.get(
        text, f"the float {text}"
    )


def _member(where: str, key: str) -> str:
    shown = key if key.isidentifier() and len(key) <= 40 else "…"
    return f"{where}.{shown}"


def text_problem(text: str) -> str | None:
    """Why no store keeps `text` as it is, or None: a NUL or a lone surrogate."""
    if "\x00" in text:
        return "a NUL character (U+0000)"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (not UTF-8)"
    return None
