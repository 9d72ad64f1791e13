"""Sending one request to a model route, and replaying recorded responses.

The live transport is `langchain-openai`'s `ChatOpenAI` against any OpenAI-compatible endpoint, with
SDK retries off (`max_retries=0`): every retry is a new, recorded attempt. A response cut short (the
output limit reached, or a stream that ended early) is an error, never completed or guessed.
Missing usage stays unknown (`None`), never 0.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI

from nodes.route import Route

OUTPUT_LIMIT = "the output limit was reached; the response is incomplete"


@dataclass(frozen=True)
class Reply:
    """What one attempt produced: a response's text and metadata, or an error."""

    content: str | None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    request_id: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def send(route: Route, text: str) -> Reply:
    """One attempt against the route's endpoint."""
    client = ChatOpenAI(
        model=route.model,
        base_url=route.base_url,
        api_key=os.environ.get(route.api_key_env) or "unset",
        timeout=route.timeout_s,
        max_retries=0,
        temperature=route.temperature,
        max_tokens=route.max_output_tokens,
        reasoning_effort=route.reasoning_effort,
        model_kwargs={"response_format": {"type": "json_object"}},
        include_response_headers=not route.stream,  # not available with a streamed response_format
        stream_usage=True,
    )
    messages = [HumanMessage(text)]
    try:
        message = _streamed(client, messages) if route.stream else client.invoke(messages)
    except openai.LengthFinishReasonError:
        return Reply(None, finish_reason="length", error=OUTPUT_LIMIT)
    except openai.APITimeoutError:
        return Reply(None, error=f"timeout after {route.timeout_s:g}s")
    except openai.APIStatusError as exc:
        return Reply(
            None, error=f"HTTP {exc.status_code} from the model endpoint", request_id=exc.request_id
        )
    except (
        openai.OpenAIError,
        httpx.HTTPError,
        ValueError,
    ) as exc:  # ValueError: an unparsable reply
        return Reply(None, error=f"transport failed: {type(exc).__name__}: {str(exc)[:200]}")
    return _reply(message)


def _streamed(client: ChatOpenAI, messages: list[HumanMessage]) -> AIMessage:
    merged = None
    for chunk in client.stream(messages):
        merged = chunk if merged is None else merged + chunk
    if merged is None:
        raise openai.APIConnectionError(
            message="the stream carried no data", request=httpx.Request("POST", "stream")
        )
    return merged


def _reply(message: AIMessage) -> Reply:
    metadata = message.response_metadata or {}
    finish = metadata.get("finish_reason")
    content = message.content if isinstance(message.content, str) else json.dumps(message.content)
    usage = dict(message.usage_metadata) if message.usage_metadata else None
    request_id = (
        (metadata.get("headers") or {}).get("x-request-id") or metadata.get("id") or message.id
    )
    reply = Reply(content, finish, usage, metadata.get("model_name"), request_id)
    if finish is None:
        return Reply(
            **{
                **reply.to_dict(),
                "content": None,
                "error": "the response ended without a finish reason (truncated)",
            }
        )
    if finish == "length":
        return Reply(
            **{
                **reply.to_dict(),
                "content": None,
                "error": "the output limit was reached; the response is incomplete",
            }
        )
    return reply


def probe(route: Route) -> str | None:
    """None when the route's endpoint answers at all (any HTTP status); else why it is unreachable."""
    base = (route.base_url or "https://api.openai.com/v1").rstrip("/")
    key = os.environ.get(route.api_key_env)
    try:
        httpx.get(
            f"{base}/models", timeout=5, headers={"Authorization": f"Bearer {key}"} if key else {}
        )
    except httpx.HTTPError as exc:
        return f"model endpoint {base} is unreachable: {type(exc).__name__}"
    return None


def write_cassette(path: Path, model_calls: list[dict[str, Any]]) -> None:
    """A replayable record of a run's model attempts, one JSON object per line."""
    path.write_text(
        "".join(json.dumps(call, ensure_ascii=False) + "\n" for call in model_calls),
        encoding="utf-8",
    )


def replay(cassette: Path, attempt: int) -> Reply:
    """The `attempt`-th (0-based) recorded response of a cassette, with no network."""
    try:
        with cassette.open(encoding="utf-8") as handle:
            for index, line in enumerate(handle):
                if index == attempt:
                    recorded = json.loads(line)["reply"]
                    return Reply(**{key: recorded.get(key) for key in Reply.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return Reply(None, error=f"cassette {cassette} unreadable at attempt {attempt + 1}: {exc}")
    return Reply(None, error=f"cassette {cassette} has no response for attempt {attempt + 1}")
