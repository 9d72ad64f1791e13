"""The canonical form of a tool's result (`tools.storable`), held to the raw input: plain JSON
every store keeps, which reads back (by the documented typed forms, decoded here) to exactly the
value the tool returned; and what no form keeps is refused without quoting it."""

from __future__ import annotations

import decimal
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.mcp.arguments import McpArgs, checked_args
from tools.storable import Unstorable, plain, shown, storable, unkept

INT64 = 2**63
EDGES = [INT64 - 1, INT64, -INT64, -INT64 - 1, 2**64, 2**127 - 1, -(2**127)]
FLOAT_EDGES = [
    math.nan,
    math.inf,
    -math.inf,
    -0.0,
    0.0,
    1e16,
    -1e16,
    9999999999999998.0,
    1e300,
    5e-324,
    1.5e-7,
    2.7670116110564327e19,
]
numbers = (
    st.integers()
    | st.integers(-(2**130), 2**130)
    | st.sampled_from(EDGES)
    | st.floats()
    | st.sampled_from(FLOAT_EDGES)
)
clean_text = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12
)
keys = clean_text.filter(lambda key: not key.startswith("$"))
results = st.recursive(
    st.none() | st.booleans() | numbers | clean_text,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=24,
)


def needs_form(number: Any) -> bool:
    """From the raw value: a number JSON does not carry exactly through every store."""
    if isinstance(number, bool):
        return False
    if isinstance(number, int):
        return not -INT64 <= number < INT64
    return (
        not math.isfinite(number)
        or (number == 0 and math.copysign(1, number) < 0)
        or abs(number) >= 1e16
    )


def any_needs_form(value: Any) -> bool:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return needs_form(value)
    if isinstance(value, dict):
        return any(any_needs_form(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(any_needs_form(item) for item in value)
    return False


def decoded(value: Any) -> Any:
    """The documented forms read back, independently of the code under test."""
    if isinstance(value, dict) and set(value) == {"$float"}:
        return float(value["$float"])
    if isinstance(value, dict) and set(value) == {"$int"}:
        return int(value["$int"])
    if isinstance(value, dict):
        return {key: decoded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decoded(item) for item in value]
    return value


def same(got: Any, raw: Any) -> bool:
    """Equal values of equal types (a tuple is kept as a list); NaN is NaN, -0.0 is not 0.0."""
    if isinstance(raw, tuple | list):
        return (
            isinstance(got, list)
            and len(got) == len(raw)
            and all(same(a, b) for a, b in zip(got, raw, strict=True))
        )
    if isinstance(raw, dict):
        return (
            isinstance(got, dict)
            and got.keys() == raw.keys()
            and all(same(got[key], raw[key]) for key in raw)
        )
    if isinstance(raw, float):
        if not isinstance(got, float):
            return False
        if math.isnan(raw):
            return math.isnan(got)
        return got == raw and math.copysign(1, got) == math.copysign(1, raw)
    return type(got) is type(raw) and got == raw


def plain_json_numbers(value: Any) -> bool:
    """No number left that some store would change: only in-range ints and plain floats."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return not needs_form(value)
    if isinstance(value, dict):
        return all(plain_json_numbers(item) for item in value.values())
    if isinstance(value, list):
        return all(plain_json_numbers(item) for item in value)
    return True


@settings(max_examples=300)
@given(results)
def test_the_canonical_form_is_plain_json_and_reads_back_to_the_raw_value(raw):
    kept = storable(raw)
    text = json.dumps(kept, allow_nan=False)  # JSON, nothing a store writes as null or refuses
    text.encode("utf-8")
    assert plain_json_numbers(kept)
    assert same(decoded(json.loads(text)), raw)
    assert same(decoded(kept), raw)


@settings(max_examples=300)
@given(results)
def test_unkept_names_a_value_exactly_when_a_number_needs_its_typed_form(raw):
    assert (unkept(raw) is not None) == any_needs_form(raw)


@pytest.mark.parametrize(
    ("raw", "form"),
    [
        (math.nan, {"$float": "NaN"}),
        (math.inf, {"$float": "Infinity"}),
        (-math.inf, {"$float": "-Infinity"}),
        (-0.0, {"$float": "-0.0"}),
        (1e16, {"$float": "1e+16"}),
        (27670116110564327421, {"$int": "27670116110564327421"}),
        (-(2**63) - 1, {"$int": "-9223372036854775809"}),
    ],
)
def test_each_typed_form_is_the_documented_one_and_plain_gives_the_value_back(raw, form):
    assert storable(raw) == form
    back = plain(form)
    assert same(back, raw)


def test_values_every_store_keeps_are_left_as_they_are():
    raw = {"rows": [["reset_smoke", 4, 0.25, None, True]], "total": INT64 - 1, "x": 9.5e15}
    assert storable(raw) == raw
    assert plain({"$float": 1}) == {"$float": 1} and plain(3) == 3


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"lines": ["ok", "a\x00b"]}, "a NUL character (U+0000) in result.lines[1]"),
        ({"cell": "\udcff"}, "a lone surrogate (not UTF-8) in result.cell"),
        ({"a\x00": 1}, "a NUL character (U+0000) in a key of result"),
        ({"rows": [{"$float": "NaN"}]}, "an object that reads as a typed number in result.rows[0]"),
        ({1: "x"}, "a key that is not text (int) in result"),
        (
            {"cell": decimal.Decimal("1.5")},
            "a value that is not JSON data (Decimal) in result.cell",
        ),
        ({"cell": b"\x00"}, "a value that is not JSON data (bytes) in result.cell"),
    ],
)
def test_what_no_form_keeps_is_refused_saying_what_and_where_without_quoting_it(raw, says):
    with pytest.raises(Unstorable) as refused:
        storable(raw)
    assert str(refused.value) == says
    assert unkept(raw, "result") == says


def test_a_nesting_deeper_than_any_result_needs_is_refused():
    deep: Any = 1
    for _ in range(70):
        deep = [deep]
    with pytest.raises(Unstorable, match="nesting deeper than 64 levels"):
        storable(deep)


def test_unkept_says_which_number_and_where():
    assert unkept({"args": {"x": math.nan}}) == "NaN in value.args.x"
    assert unkept([1, -math.inf]) == "an infinity in value[1]"
    assert unkept({"n": 2**70}) == "an integer beyond 64 bits (22 digits) in value.n"
    assert unkept({"f": 1e20}) == "the float 1e+20 in value.f"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (math.nan, "NaN in arguments.x"),
        (-math.inf, "an infinity in arguments.x"),
        (-0.0, "the float -0.0 in arguments.x"),
        (2**64, "an integer beyond 64 bits (20 digits) in arguments.x"),
    ],
)
def test_an_mcp_call_whose_arguments_no_store_keeps_is_refused(value, says):
    """An MCP call's arguments are sent and recorded as given, so they get no typed form: a
    schema's `number` accepts NaN and infinities, and they are refused instead."""
    schema = {"type": "object", "properties": {"x": {"type": "number"}}}
    assert checked_args({"x": value}, schema) == f"{says}: no store keeps it as given"
    assert isinstance(checked_args({"x": 0.5}, schema), McpArgs)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (math.nan, "nan"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (-0.0, "-0.0"),
        (2**70, "1180591620717411303424"),
        (2.5, "2.5"),
        ("NaN", "NaN"),
    ],
)
def test_a_stored_value_is_shown_as_the_analysis_lines_show_it(raw, text):
    assert shown(storable(raw)) == text == str(raw)
