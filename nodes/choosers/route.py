"""The model route: which endpoint and model a run uses, pinned at admission and stored with it.

Read from the environment (`WARRANT_MODEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `WARRANT_MODEL_*`).
The key itself is never stored: the route names the variable that holds it.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError

from contract.strict import FrozenModel
from contract.text import describe_validation_error, one_line

ROUTE_VERSION = 2
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
IDENTITY_FIELDS = (
    "version",
    "model",
    "base_url",
    "locality",
    "temperature",
    "reasoning_effort",
    "max_output_tokens",
    "token_param",
    "context_tokens",
    "dialect",
)
"""A route's identity (`Route.identity`): what an evaluation report is bound to."""


class RouteError(ValueError):
    """No usable route: the message names the missing or invalid setting."""


class Route(FrozenModel):
    version: int = ROUTE_VERSION
    model: Annotated[str, Field(min_length=1, max_length=200)]
    base_url: str | None = None
    """None: the provider's default (OpenAI)."""
    api_key_env: str = "OPENAI_API_KEY"
    locality: Literal["local", "remote"]
    """`remote` routes never receive the content of records marked `share = "local"`."""
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 60.0
    max_output_tokens: Annotated[int, Field(ge=16, le=200_000)] = 1024
    context_tokens: Annotated[int, Field(ge=256, le=10_000_000)] = 16_000
    temperature: Annotated[float, Field(ge=0, le=2)] | None = 0.0
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    stream: bool = False
    dialect: Literal["json_object", "json_schema", "json_object+schema"] = "json_object"
    """How the server is asked for JSON: OpenAI's JSON mode; structured outputs with the response
    schema (`nodes.choosers.response_schema`); or llama.cpp's JSON mode with that schema, which it
    compiles into a grammar. The guard validates every reply the same way whichever is used."""
    token_param: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    """The name the server reads the output limit under (llama.cpp's server ignores the first)."""
    concurrency: Annotated[int, Field(ge=1, le=256)] = 1
    """Runs that may ask this route at once (`warrant eval --parallel`): a local server answers one
    request at a time and queues the rest, which would spend their deadlines waiting."""
    max_attempts: Annotated[int, Field(ge=1, le=20)] = 3
    """Consecutive failed attempts (errors, malformed output) after which the run is `model_failed`."""
    backoff_s: Annotated[float, Field(ge=0, le=60)] = 0.5
    """The first wait between attempts of a turn, doubled for each further failure."""
    backoff_max_s: Annotated[float, Field(ge=0, le=600)] = 20.0
    """The longest wait, also for a larger `Retry-After`."""

    def identity(self) -> dict[str, Any]:
        """What an evaluation of this route measured (`guards.route_admission`): its endpoint,
        model and locality, and every setting that changes what the model is sent or answers —
        the sampling, the output limit and the name it is sent under, the context the request is
        fitted to, the reasoning effort, the JSON dialect (a schema, a grammar). Not its key, its
        timeouts, retries, concurrency or streaming: how long and how often it is asked."""
        found: dict[str, Any] = {name: getattr(self, name) for name in IDENTITY_FIELDS}
        if isinstance(found["base_url"], str):
            found["base_url"] = found["base_url"].rstrip("/")
        return found

    def gives_up_after(self, failed: int) -> bool:
        """Whether `failed` consecutive failed attempts (a transport error or malformed output,
        whichever node counted the last) end the run `model_failed`."""
        return failed >= self.max_attempts


def route_from_env(environ: dict[str, str] | None = None) -> Route:
    env = os.environ if environ is None else environ
    model = env.get("WARRANT_MODEL", "").strip()
    if not model:
        raise RouteError(
            "the model chooser needs WARRANT_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY)"
        )
    base_url = env.get("OPENAI_BASE_URL") or None
    if base_url:
        check_base_url(base_url)
    host = urlsplit(base_url).hostname if base_url else None
    fields = {
        "model": model,
        "base_url": base_url,
        "locality": env.get("WARRANT_MODEL_LOCALITY")
        or ("local" if host in LOOPBACK else "remote"),
        "timeout_s": env.get("WARRANT_MODEL_TIMEOUT"),
        "max_output_tokens": env.get("WARRANT_MODEL_OUTPUT_TOKENS"),
        "context_tokens": env.get("WARRANT_MODEL_CONTEXT_TOKENS"),
        "temperature": env.get("WARRANT_MODEL_TEMPERATURE"),
        "reasoning_effort": env.get("WARRANT_MODEL_REASONING") or None,
        "stream": env.get("WARRANT_MODEL_STREAM", "").lower() in ("1", "true", "yes"),
        "dialect": env.get("WARRANT_MODEL_DIALECT") or None,
        "token_param": env.get("WARRANT_MODEL_TOKEN_PARAM") or None,
        "concurrency": env.get("WARRANT_MODEL_CONCURRENCY"),
        "max_attempts": env.get("WARRANT_MODEL_ATTEMPTS"),
        "backoff_s": env.get("WARRANT_MODEL_BACKOFF"),
        "backoff_max_s": env.get("WARRANT_MODEL_BACKOFF_MAX"),
    }
    try:
        return Route.model_validate(
            {key: value for key, value in fields.items() if value is not None}
        )
    except ValidationError as exc:
        raise RouteError(f"model route: {describe_validation_error(exc)}") from None


def check_base_url(base: str) -> None:
    """A base URL that is not an http(s) URL with a host is bad input, not an unreachable service."""
    try:
        parts = urlsplit(base)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        usable = False
    if not usable:
        raise RouteError(f"OPENAI_BASE_URL {one_line(base, 100)!r} is not an http(s) URL")
