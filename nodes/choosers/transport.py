"""Sending one request to a model route: one attempt, whatever comes back, as a recorded `Reply`.

The live transport is `langchain-openai`'s `ChatOpenAI` against any OpenAI-compatible endpoint, with
SDK retries off (`max_retries=0`): every retry is a new, recorded attempt. Whatever comes back is a
`Reply`, never an exception: an HTTP error, a timeout, or an HTTP 200 body that is not a usable
completion (an error object, no choices, a bare string) is a failed attempt with a one-line error.
A response cut short (the output limit reached, or a stream that ended early) is an error, never
completed or guessed; its partial text is recorded. Missing usage stays unknown (`None`), never 0.
A reply of native tool calls becomes the action document they state (`as_document`), which the
guard then parses like any other text: the transport maps, it never repairs or decides. What a
reply's body, calls and usage say is read by `nodes/choosers/reply_body.py`.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
import os
import queue
import threading
import time
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import httpx
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from contract.text import one_line, storable_text
from guards.action import MAX_DOCUMENT_CHARS
from guards.egress import Outbound
from nodes.choosers.reply_body import (
    CALLS_FINISHED,
    NativeCall,
    as_document,
    body_calls,
    body_problem,
    calls_are_the_proposal,
    native_call,
    plain,
    response_body,
    streamed_calls,
    unfinished_calls,
    unreadable_calls,
    usage_of,
    usage_problem,
)
from nodes.choosers.route import Route, RouteError, check_base_url

if TYPE_CHECKING:  # imported when a model is asked: they cost 0.7 s at every command's start
    import openai
    from langchain_openai import ChatOpenAI

OUTPUT_LIMIT = "the output limit was reached; the response is incomplete"
TRUNCATED = "the response ended without a finish reason (truncated)"
CONTENT_FILTER = "the endpoint's content filter stopped the response"
RECORDED_CHARS = MAX_DOCUMENT_CHARS + 1
"""At most this much of a reply's text is recorded (and shown to the guard): one character more than
the guard accepts, so its decision on the recorded prefix is its decision on the whole reply."""
NOT_RETRIED = {
    400: "the endpoint refused the request as sent; check WARRANT_MODEL and the route's settings",
    401: "check {key}",
    403: "check {key}",
    404: "check WARRANT_MODEL and OPENAI_BASE_URL",
    413: "the request is too large for the endpoint; lower WARRANT_MODEL_CONTEXT_TOKENS",
    422: "the endpoint refused the request as sent; check WARRANT_MODEL and the route's settings",
}
"""Statuses another attempt of the same request cannot change, with what to check."""


@dataclass(frozen=True)
class Reply:
    """What one attempt produced, as recorded: what the server sent, or why there is nothing."""

    content: str | None
    """The message text, cut to `RECORDED_CHARS`; for a cut-short reply, the partial text; for
    native tool calls, the action document they state (`as_document`)."""
    finish_reason: str | None = None
    usage: dict[str, int | None] | None = None
    """Token counts as reported (a count not reported is None); None when no usage came, never 0."""
    model: str | None = None
    request_id: str | None = None
    error: str | None = None
    """Why this attempt yields no proposal, in one line; None for a usable reply."""
    status: int | None = None
    """The HTTP status of a refused request."""
    retry_after_s: float | None = None
    """The endpoint's `Retry-After`, in seconds, when it sent one."""
    retryable: bool = True
    """False when another attempt cannot help (401, 403, 404, a cassette that diverged)."""
    tool_calls: str | None = None
    """The native tool calls as sent (`NativeCall`s, as JSON text, cut like `content`); never
    executed: when they are mapped, `content` is the action document they state."""
    refusal: str | None = None
    """The model's refusal text, when it sent one."""
    chars: int | None = None
    """The length of the whole text, of which `content` may be a prefix."""
    sha256: str | None = None
    """The sha256 of the whole text (UTF-8)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def send(
    route: Route,
    outbound: Outbound,
    timeout_s: float | None = None,
    schema: dict[str, Any] | None = None,
    monotonic: Callable[[], float] = time.monotonic,
    traced: bool = True,
) -> Reply:
    """One attempt against the route's endpoint, over in `timeout_s` (default: the route's) at
    most, as `monotonic` counts it (the run's, `WarrantContext.monotonic`). The text is taken only as the egress gate let it out for this route's locality
    (`guards.egress`): a request gated for a local route is never sent to a remote one. The SDK's timeout bounds each wait for bytes, not the whole response, so an endpoint
    that trickles its reply could hold the run past its deadline: the attempt runs on a thread of
    its own and is given up when the time is over (it ends on its own later; its reply is dropped).
    `traced=False`: LangSmith traces nothing of the attempt, whatever `LANGSMITH_TRACING` says;
    otherwise the attempt is traced as its caller's context says (a run's hiding client)."""
    if outbound.locality != route.locality:
        return Reply(
            None,
            error=f"egress refused: a request gated for a {outbound.locality} route is not sent to a {route.locality} one",
        )
    text = outbound.text
    timeout = route.timeout_s if timeout_s is None else timeout_s
    replies: queue.SimpleQueue[Reply] = queue.SimpleQueue()

    def attempt() -> None:
        try:
            with nullcontext() if traced else _untraced():
                replies.put(_attempt(route, text, timeout, schema, monotonic))
        except BaseException as exc:  # never lost: the waiting node would only see a timeout
            replies.put(Reply(None, error=f"transport failed: {type(exc).__name__}"))

    # The caller's context goes with the attempt: a run's LangSmith tracing hides node inputs and
    # outputs through its own client (`graph.present.langsmith_tracing`); a bare thread would trace
    # the request through the default client instead, local record content and all.
    caller = contextvars.copy_context()
    threading.Thread(
        target=caller.run, args=(attempt,), name="warrant-model-attempt", daemon=True
    ).start()
    try:
        return replies.get(timeout=timeout + GRACE_S)
    except queue.Empty:
        return Reply(None, error=f"timeout after {timeout:.3g}s for the whole response")


GRACE_S = 0.05


def _untraced() -> AbstractContextManager[None]:
    from langsmith import tracing_context

    return tracing_context(enabled=False)


"""Past the attempt's time, so that the SDK's own timeout, when it comes first, is the one said."""


def response_format(route: Route, schema: dict[str, Any] | None) -> dict[str, Any]:
    """How the route's server is asked for one JSON object (`Route.dialect`), with the response
    schema where the dialect takes one."""
    if route.dialect == "json_object" or schema is None:
        return {"type": "json_object"}
    if route.dialect == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "action_document", "schema": schema}}
    return {"type": "json_object", "schema": schema}


def _attempt(
    route: Route,
    text: str,
    timeout: float,
    schema: dict[str, Any] | None,
    monotonic: Callable[[], float],
) -> Reply:
    import openai
    from langchain_openai import ChatOpenAI

    responses: list[httpx.Response] = []  # what the server answered, to say why a body is unusable
    with openai.DefaultHttpxClient(event_hooks={"response": [responses.append]}) as http:
        client = ChatOpenAI(
            model=route.model,
            base_url=route.base_url,
            api_key=os.environ.get(route.api_key_env) or "unset",
            timeout=math.ceil(timeout),  # whole seconds: the SDK caches a client per value
            max_retries=0,
            temperature=route.temperature,
            reasoning_effort=route.reasoning_effort,
            model_kwargs={"response_format": response_format(route, schema)},
            **_output_limit(route),
            include_response_headers=not route.stream,  # not available with a streamed response_format
            stream_usage=True,
            http_client=http,
        )
        messages = [HumanMessage(text)]
        try:
            with warnings.catch_warnings():  # a bad usage count is our error, not a stderr warning
                warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
                message = (
                    _streamed(client, http, messages, timeout, monotonic)
                    if route.stream
                    else client.invoke(messages)
                )
        except openai.LengthFinishReasonError as exc:
            return _cut_short(exc.completion, "length", OUTPUT_LIMIT)
        except openai.ContentFilterFinishReasonError as exc:
            return _cut_short(exc.completion, "content_filter", CONTENT_FILTER)
        except openai.APITimeoutError:
            return Reply(None, error=f"timeout after {timeout:.3g}s")
        except openai.APIStatusError as exc:
            return _status_error(exc, route)
        # Any other failure, such as an HTTP 200 body that is not a completion, is a recorded
        # attempt too (no interrupt or other control flow can come from inside the client).
        except Exception as exc:
            calls = [] if route.stream else body_calls(responses)
            return Reply(None, error=_unusable(exc, responses), tool_calls=_recorded_calls(calls))
    calls = streamed_calls(message) if route.stream else body_calls(responses)
    return _reply(message, calls)


def _output_limit(route: Route) -> dict[str, Any]:
    """The output limit under the name the route's server reads (`Route.token_param`)."""
    if route.token_param == "max_tokens":
        return {"extra_body": {"max_tokens": route.max_output_tokens}}
    return {"max_tokens": route.max_output_tokens}  # sent as max_completion_tokens


def _streamed(
    client: ChatOpenAI,
    http: openai.DefaultHttpxClient,
    messages: list[HumanMessage],
    timeout: float,
    monotonic: Callable[[], float],
) -> AIMessage:
    """The merged stream; `timeout` bounds the whole stream, not only the wait between chunks.
    The errors' request is built by the SDK's own client (whichever HTTP library it uses)."""
    import openai

    ends = monotonic() + timeout
    merged = None
    for chunk in client.stream(messages):
        merged = chunk if merged is None else merged + chunk
        if monotonic() > ends:
            raise openai.APITimeoutError(request=http.build_request("POST", "stream"))
    if merged is None:
        raise openai.APIConnectionError(
            message="the stream carried no data", request=http.build_request("POST", "stream")
        )
    return merged


def _reply(message: AIMessage, calls: list[NativeCall]) -> Reply:
    metadata = message.response_metadata or {}
    content = message.content if isinstance(message.content, str) else json.dumps(message.content)
    raw_usage = metadata.get("token_usage")
    refusal = message.additional_kwargs.get("refusal")
    refusal = storable_text(refusal)[:2000] if isinstance(refusal, str) and refusal else None
    request_id = (
        (metadata.get("headers") or {}).get("x-request-id") or metadata.get("id") or message.id
    )
    finish = metadata.get("finish_reason")
    mapped = calls_are_the_proposal(content, calls)
    error = (
        usage_problem(raw_usage)
        or (TRUNCATED if finish is None else None)
        or (OUTPUT_LIMIT if finish == "length" else None)
        or (f"the model refused: {one_line(refusal, 200)}" if refusal else None)
        or (unfinished_calls(finish) if mapped and finish not in CALLS_FINISHED else None)
    )
    text = as_document(content, calls) if mapped and not error else content
    return Reply(
        **recorded_text(text),
        finish_reason=_name(finish),
        usage=usage_of(raw_usage),
        model=_name(metadata.get("model_name")),
        request_id=_name(request_id),
        error=error,
        refusal=refusal,
        tool_calls=_recorded_calls(calls),
    )


def _recorded_calls(calls: list[NativeCall]) -> str | None:
    """Native tool calls as recorded: JSON text, cut like a reply's text; None when none came."""
    return recorded_text(json.dumps(calls, ensure_ascii=False))["content"] if calls else None


def _cut_short(completion: Any, finish: str, error: str) -> Reply:
    """A reply the SDK refused to parse (output limit, content filter): its partial text kept."""
    choices = getattr(completion, "choices", None) or [None]
    content = getattr(getattr(choices[0], "message", None), "content", None)
    usage = getattr(completion, "usage", None)
    raw_usage = usage.model_dump() if isinstance(usage, BaseModel) else None
    fields = recorded_text(content) if isinstance(content, str) else {"content": None}
    calls = getattr(getattr(choices[0], "message", None), "tool_calls", None) or []
    return Reply(
        **fields,
        tool_calls=_recorded_calls([native_call(plain(call)) for call in calls]),
        finish_reason=finish,
        usage=usage_of(raw_usage),
        error=error,
        model=_name(getattr(completion, "model", None)),
        request_id=_name(getattr(completion, "id", None)),
    )


def _status_error(exc: openai.APIStatusError, route: Route) -> Reply:
    status = exc.status_code
    hint = NOT_RETRIED.get(status)
    error = f"HTTP {status} from the model endpoint" + (
        f" (not retried: {hint.format(key=route.api_key_env)})" if hint else ""
    )
    return Reply(
        None,
        error=error,
        status=status,
        request_id=_name(exc.request_id),
        retry_after_s=retry_after(exc.response.headers.get("retry-after")),
        retryable=hint is None,
    )


def _unusable(exc: Exception, responses: list[httpx.Response]) -> str:
    """Why the attempt yielded nothing: what is wrong with the body, when one came."""
    body = response_body(responses[-1]) if responses else None
    problem = body_problem(body) if body is not None else None
    return (
        problem
        or unreadable_calls(exc)
        or f"transport failed: {type(exc).__name__}: {one_line(str(exc), 200)}"
    )


def retry_after(header: str | None) -> float | None:
    """`Retry-After` in seconds (an HTTP date is not honoured: the endpoint's clock is not ours)."""
    try:
        seconds = float(header) if header is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def recorded_text(text: str) -> dict[str, Any]:
    """The recorded form of a reply's text: a bounded prefix, the whole length and sha256."""
    clean = storable_text(text)
    digest = hashlib.sha256(clean.encode("utf-8")).hexdigest()
    return {"content": clean[:RECORDED_CHARS], "chars": len(clean), "sha256": digest}


def _name(value: object) -> str | None:
    """A name the endpoint sent (model, request id, finish reason): a clean string of one line, at
    most 200 characters, or None; state, cassettes and the server's JSON take UTF-8 only."""
    return one_line(storable_text(value), 200) if isinstance(value, str) else None


def probe(route: Route, timeout_s: float = 5.0) -> str | None:
    """None when the route's endpoint answers at all (any HTTP status, or accepts the connection
    and is too busy to answer within `timeout_s`); else why it is unreachable.
    A base URL that is not an http(s) URL is bad input (`RouteError`), not an unreachable service."""
    base = (route.base_url or "https://api.openai.com/v1").rstrip("/")
    check_base_url(base)
    key = os.environ.get(route.api_key_env)
    try:
        httpx.get(
            f"{base}/models",
            timeout=timeout_s,
            headers={"Authorization": f"Bearer {key}"} if key else {},
        )
    except httpx.InvalidURL as exc:
        raise RouteError(f"OPENAI_BASE_URL {one_line(base, 100)!r} is not usable: {exc}") from None
    except (httpx.ReadTimeout, httpx.RemoteProtocolError):
        return None  # it accepted the connection: busy (a one-slot local server), not unreachable
    except httpx.HTTPError as exc:
        return f"model endpoint {base} is unreachable: {type(exc).__name__}"
    return None
