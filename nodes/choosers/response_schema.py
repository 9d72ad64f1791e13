"""The response schema a model server may use to constrain its decoding: derived from the profile's
catalog and the run's grant, in the subset of JSON Schema that small servers compile.

It is a hint to the server, never a check: the guard validates every document with Warrant's own
action-document model, whatever the server did. It names only the profile's tools, and for each
record argument only the granted records of the tool's kind, so a small model that follows it
proposes calls the guard can consider (the seed's finding: with Warrant's open schema a 135M model
produced no valid document; with tools and record ids named, one every turn). Call ids are
offered fresh for the turn. Strings are bounded at most `MAX_STRING` characters, never more than
Warrant allows: llama.cpp 0.3.36 compiles a bound of 500 but fails on the action document's 2000
("failed to parse grammar") and its server process dies; unbounded strings let a small model
ramble into the output limit. Patterns and formats are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contract.codes import InteractionKind, Outcome
from guards.action import MAX_CALLS_PER_TURN, TaskBudget
from guards.recall import RECALL, RecallArgs
from tools.catalog import ToolSpec

DROPPED = frozenset({"pattern", "format", "title", "description"})
"""Keywords a small server's grammar compiler may not take; none of them is relied on."""
QUESTION, DELEGATE, REMEMBER = (
    InteractionKind.QUESTION.value,
    Outcome.DELEGATE.value,
    Outcome.REMEMBER.value,
)
"""The ask_user message's question field, and the delegate message's kind."""
MAX_STRING = 300
"""The longest string the schema lets a server generate (see above)."""
TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_STRING}
MAX_ENUM_RANGE = 200
"""Integers with closer bounds are offered as the list of their values (see `server_safe`)."""


def response_schema(
    specs: Iterable[ToolSpec],
    records: Sequence[Mapping[str, str]],
    refs: Sequence[str],
    delegation: Mapping[str, Any] | None,
    turn: int,
    left: Mapping[str, float],
    memory: bool = False,
    families: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """An object with a summary and either tool calls or a message (stop, ask_user, and delegate
    where the run may delegate); hypotheses cite only `refs`, the refs that exist. Each call
    and task has its position's id, fresh for the turn (`fresh_ids`): none repeats. With
    `memory`: a batch of recall calls, and a remember message."""
    globs = [family["glob"] for family in families]
    tools = [tool for tool in (_tool(spec, records, globs) for spec in specs) if tool is not None]
    messages = [_stop(refs), _ask_user()]
    if delegation:
        task_ids = fresh_ids(turn, "k", int(delegation["max_tasks"]))
        messages.append(_delegate(records, task_ids, left))
    if memory:
        messages.append(_remember(refs))
    outcomes = [{"message": {"anyOf": messages}}]
    if tools:
        calls = [
            {"anyOf": [_call(call_id, tool) for tool in tools]}
            for call_id in fresh_ids(turn, "c", MAX_CALLS_PER_TURN)
        ]
        outcomes.insert(0, {"tool_calls": _positions(calls)})
    if memory:
        recall = (RECALL, server_safe(RecallArgs.model_json_schema()))
        outcomes.insert(
            1,
            {
                "tool_calls": _positions(
                    [_call(call_id, recall) for call_id in fresh_ids(turn, "r", 2)]
                )
            },
        )
    return {"anyOf": [_object({"summary": TEXT, **outcome}) for outcome in outcomes]}


def fresh_ids(turn: int, kind: str, count: int) -> list[str]:
    """Ids no earlier turn of the lane could have used (`t3c1`… for calls, `t3k1`… for tasks)."""
    return [f"t{turn}{kind}{index}" for index in range(1, count + 1)]


def _tool(
    spec: ToolSpec, records: Sequence[Mapping[str, str]], globs: Sequence[str]
) -> tuple[str, dict[str, Any]] | None:
    """A tool's name and argument schema, its record arguments limited to the granted records of
    its kind and a family argument to the granted globs; None when no granted record (or family)
    is of that kind (no call of it could be allowed)."""
    kinds = spec.table_kinds if spec.tables_field else (spec.record_kind,)
    ids = [record["id"] for record in records if record["kind"] in kinds]
    readable = (ids or globs) if spec.tables_field else (globs if spec.family_field else ids)
    if not readable:
        return None
    args = server_safe(spec.args_model.model_json_schema())
    for field in spec.record_fields:
        named = {"type": "string", "enum": ids}
        optional = field in spec.optional_records
        args["properties"][field] = {"anyOf": [named, {"type": "null"}]} if optional else named
        if optional and not ids:
            args["properties"][field] = {"type": "null"}
    if spec.family_field:
        family = {"type": "string", "enum": list(globs)}
        optional = spec.family_field in spec.optional_records
        args["properties"][spec.family_field] = (
            ({"anyOf": [family, {"type": "null"}]} if globs else {"type": "null"})
            if optional
            else family
        )
    if spec.tables_field:
        # Plain shapes only: a grammar built from the schema (llama.cpp) has no $ref or
        # patternProperties to lean on; a model plots nothing (`plot` is the author's option).
        args["properties"][spec.tables_field] = {
            "type": "object",
            "additionalProperties": {"type": "string", "enum": ids},
            "maxProperties": 8,
        }
        args["properties"].pop("plot", None)
        args.pop("$defs", None)
    return spec.name, args


def _call(call_id: str, tool: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    name, args = tool
    return _object({"id": {"const": call_id}, "name": {"const": name}, "args": args})


def _stop(refs: Sequence[str]) -> dict[str, Any]:
    hypothesis = _object({"statement": TEXT, "refs": _array({"enum": list(refs)}, 1, 20)})
    hypotheses = _array(hypothesis, 0, 10) if refs else _array({"type": "object"}, 0, 0)
    text = {"type": "string", "maxLength": MAX_STRING}  # may be empty
    return _object({"kind": {"const": "stop"}, "text": text, "hypotheses": hypotheses})


def _remember(refs: Sequence[str]) -> dict[str, Any]:
    cited = _array({"enum": list(refs)}, 0, 20) if refs else _array({"type": "string"}, 0, 0)
    signature = {"type": "string", "maxLength": 200}
    return _object(
        {"kind": {"const": REMEMBER}, "text": TEXT, "signature": signature, "refs": cited}
    )


def _ask_user() -> dict[str, Any]:
    return _object(
        {"kind": {"const": "ask_user"}, QUESTION: TEXT, "blocking": {"type": "boolean"}},
        required=("kind", QUESTION),
    )


def _delegate(
    records: Sequence[Mapping[str, str]], task_ids: Sequence[str], left: Mapping[str, float]
) -> dict[str, Any]:
    """A delegation; each task names one granted record (two could repeat one, which Warrant
    refuses, and a grammar cannot keep strings of an array apart) and asks at most what is left
    (the guard checks the tasks' sum)."""
    ids = [record["id"] for record in records]
    budget = TaskBudget.model_json_schema()
    for name, most in (("steps", left["steps"] - 1), ("evidence", left["evidence"])):
        bounds = budget["properties"][name]
        bounds["maximum"] = max(bounds["minimum"], min(bounds["maximum"], int(most)))
    budget = server_safe(budget)
    tasks = [
        _object(
            {
                "id": {"const": task_id},
                "goal": TEXT,
                "records": _array({"enum": ids}, 1, 1),
                "budget": budget,
            }
        )
        for task_id in task_ids
    ]
    return _object({"kind": {"const": DELEGATE}, "tasks": _positions(tasks)})


def _positions(items: list[dict[str, Any]]) -> dict[str, Any]:
    """An array of one to `len(items)` items, the item at each position fitting that position's
    schema (how ids are made unique in a document without `uniqueItems` on objects)."""
    return {"type": "array", "prefixItems": items, "minItems": 1, "maxItems": len(items)}


def _object(properties: dict[str, Any], required: Iterable[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


def _array(items: dict[str, Any], least: int, most: int) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": least, "maxItems": most}


def server_safe(schema: Any) -> Any:
    """`schema` without the keywords in `DROPPED`, and its strings bounded at `MAX_STRING`, at
    every level."""
    if isinstance(schema, dict):
        safe = {
            key: _properties(value) if key == "properties" else server_safe(value)
            for key, value in schema.items()
            if key not in DROPPED
        }
        if safe.get("type") == "string" and "enum" not in safe:
            safe["maxLength"] = min(safe.get("maxLength", MAX_STRING), MAX_STRING)
        return _small_range_as_enum(safe)
    if isinstance(schema, list):
        return [server_safe(item) for item in schema]
    return schema


def _small_range_as_enum(schema: dict[str, Any]) -> dict[str, Any]:
    """An integer between close bounds as the list of its values: llama.cpp 0.3.36 ignores
    `minimum` and `maximum` (a live model asked a child for 0 evidence, which Warrant refuses)."""
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("type") != "integer" or not isinstance(low, int) or not isinstance(high, int):
        return schema
    if not 0 <= high - low <= MAX_ENUM_RANGE:
        return schema
    return {key: value for key, value in schema.items() if key not in ("minimum", "maximum")} | {
        "enum": list(range(low, high + 1))
    }


def _properties(properties: Any) -> Any:
    """A `properties` mapping: its keys are argument names (one may be `title`), kept all."""
    if not isinstance(properties, dict):
        return server_safe(properties)
    return {name: server_safe(value) for name, value in properties.items()}
