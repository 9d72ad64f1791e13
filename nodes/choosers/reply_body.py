"""What a model's reply says, read without deciding: an HTTP 200 body that is no chat completion,
usage that is no token counts, and native tool calls (from a stream's deltas or a completion's
body) as the action document they state, which the guard then parses like any other text. The
transport (`transport.py`) makes a recorded `Reply` of what this reads.
"""

from __future__ import annotations

import json
from typing import TypedDict

import httpx
from langchain_core.messages import AIMessage, AIMessageChunk
from pydantic import BaseModel, ValidationError

from contract.text import describe_validation_error, one_line
from guards.action import unique_keys

CALLS_FINISHED = ("stop", "tool_calls")
"""The finish reasons of a reply whose native tool calls are whole, and so may be mapped (a reply
cut short, or one ended another way, such as a content filter, is never taken as calls)."""
USAGE_COUNTS = {
    "input_tokens": "prompt_tokens",
    "output_tokens": "completion_tokens",
    "total_tokens": "total_tokens",
}


class NativeCall(TypedDict):
    """One native tool call as the endpoint sent it: `arguments` is the JSON text it came as, not
    parsed; a field left out is None, and one of another type is kept as it came."""

    id: object
    name: object
    arguments: object


def as_document(content: str, calls: list[NativeCall]) -> str:
    """The action document a reply's native tool calls state, for the guard to parse like any
    text the model returns (one path into the guard, and the ledger and cassettes record this
    text, which is what the guard saw). Nothing is guessed or repaired: arguments that are not
    JSON text as the guard parses it (strict, no repeated key), a missing name or id, go in as
    they came (a string, null), so the guard refuses the document as `malformed_action` and says
    which field is wrong; what decides stays the guard. (Arguments that are JSON but not an object
    never come here: the client library cannot build its message with them, `unreadable_calls`.)
    The summary is the reply's prose, as it came, or else one naming the calls."""
    names = ", ".join(call["name"] if isinstance(call["name"], str) else "?" for call in calls)
    summary = content if content.strip() else one_line(f"native tool calls: {names}", 200)
    document = {
        "summary": summary,
        "tool_calls": [
            {"id": call["id"], "name": call["name"], "args": _arguments(call["arguments"])}
            for call in calls
        ],
    }
    return json.dumps(document, ensure_ascii=False)


def _arguments(raw: object) -> object:
    """A call's arguments, parsed as the guard parses a document; else as they came."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError):
        return raw


def calls_are_the_proposal(content: str, calls: list[NativeCall]) -> bool:
    """Whether a reply's native calls, not its content, are what the guard is to see: content that
    is a JSON object is the model's own document, and calls beside it are only recorded; prose, or
    no content, leaves the calls, with the prose as their summary."""
    if not calls:
        return False
    try:
        return not isinstance(json.loads(content), dict)
    except (ValueError, RecursionError):
        return True


def unfinished_calls(finish: object) -> str:
    return (
        f"native tool calls that ended with finish reason {one_line(repr(finish), 40)} are not"
        f" taken (only {' or '.join(CALLS_FINISHED)})"
    )


def streamed_calls(message: AIMessage) -> list[NativeCall]:
    """A stream's tool calls: its deltas merged by index, the arguments as the text they made up
    (not `message.tool_calls`, where the client library completes partial JSON)."""
    chunks = message.tool_call_chunks if isinstance(message, AIMessageChunk) else []
    return [
        NativeCall(id=chunk.get("id"), name=chunk.get("name"), arguments=chunk.get("args"))
        for chunk in chunks
    ]


def body_calls(responses: list[httpx.Response]) -> list[NativeCall]:
    """A completion's tool calls, read from its body: the client library's own reading fills in
    what is missing (`{}` for absent arguments, `""` for a name) and drops a call with no
    function, which would be guessing."""
    data = response_body(responses[-1]) if responses else None
    try:
        raw = json.loads(data or b"null")["choices"][0]["message"].get("tool_calls")
    except (ValueError, RecursionError, LookupError, TypeError, AttributeError):
        return []
    return [native_call(call) for call in raw] if isinstance(raw, list) else []


def native_call(raw: object) -> NativeCall:
    call = raw if isinstance(raw, dict) else {}
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    return NativeCall(
        id=call.get("id"), name=function.get("name"), arguments=function.get("arguments")
    )


def unreadable_calls(exc: Exception) -> str | None:
    """Native calls the client library cannot build its message with: arguments that are JSON but
    not an object (an array, a string). Not guessed, and not a document: a failed attempt."""
    if not isinstance(exc, ValidationError):
        return None
    if not any(error["loc"][:1] == ("tool_calls",) for error in exc.errors()):
        return None
    return f"the reply's native tool calls cannot be read: {describe_validation_error(exc)}"


def response_body(response: httpx.Response) -> bytes | None:
    if response.status_code != 200:
        return None
    try:
        return response.content
    except RuntimeError:  # ResponseNotRead (of httpx2, which the SDK uses): a consumed stream
        return None


def body_problem(data: bytes) -> str | None:
    """What makes an HTTP 200 body unusable as a chat completion, in one line; None if nothing."""
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        return f"the reply is not JSON ({len(data)} bytes)"
    if not isinstance(body, dict):
        return f"the reply is a JSON {_json_type(body)}, not a chat completion object"
    if error := body.get("error"):
        message = error.get("message") if isinstance(error, dict) else error
        return f"the endpoint answered HTTP 200 with an error: {one_line(str(message), 200)}"
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        return f"the reply has no choices (choices: {one_line(json.dumps(choices), 40)})"
    if not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        return "the reply's first choice has no message"
    return usage_problem(body.get("usage"))


def usage_problem(raw: object) -> str | None:
    """Usage that is present but not token counts (a count that is null is merely unknown)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return f"the reply's usage is a JSON {_json_type(raw)}, not an object"
    bad = [
        f"{name}={one_line(repr(raw[name]), 40)}"
        for name in USAGE_COUNTS.values()
        if raw.get(name) is not None and not _is_count(raw[name])
    ]
    return f"the reply's usage is not token counts: {', '.join(bad)}" if bad else None


def usage_of(raw: object) -> dict[str, int | None] | None:
    """Reported token counts, unknown ones None; None when the reply reported none at all."""
    if not isinstance(raw, dict):
        return None
    counts = {ours: raw.get(theirs) for ours, theirs in USAGE_COUNTS.items()}
    counts = {name: value if _is_count(value) else None for name, value in counts.items()}
    return counts if any(value is not None for value in counts.values()) else None


def _is_count(value: object) -> bool:
    """A token count: a non-negative integer that fits 64 bits (no checkpoint stores a larger one)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def plain(value: object) -> object:
    """An SDK object as the JSON it came as."""
    return value.model_dump() if isinstance(value, BaseModel) else value
