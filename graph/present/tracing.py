"""A run as a trace: OpenTelemetry spans built from its sealed ledger (`warrant trace`).

Spans are made after the fact from the ledger, with the ledger's own times: one span for the run,
one per turn, one per node's entry (choose, model, guard, human, tool, runtime) and one per tool
call (executing → executed). Their attributes are ids, refs, hashes, counts and codes only: no
record body, excerpt, summary, proposal text or stop text is ever an attribute, so nothing of a
`share = "local"` record leaves through a trace. Exported over OTLP/HTTP when
`OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is set. Where the evidence went is
`graph/present/flows.py`; LangSmith's traces, `graph/present/langsmith_tracing.py`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from contract.codes import EventKind

if TYPE_CHECKING:  # imported when a trace is made: OpenTelemetry costs every command's start
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

NODE_OF = {
    EventKind.REQUESTED: "choose",
    EventKind.PROPOSED: "choose",
    EventKind.MODEL_REPLIED: "model",
    EventKind.EXECUTING: "tool",
    EventKind.EXECUTED: "tool",
    EventKind.ADMITTED: "runtime",
    EventKind.STOPPED: "runtime",
    EventKind.HANDOVER: "runtime",
}
"""The node an entry comes from; any other entry is the guard's or a person's (by its actor)."""
SAFE_KEYS = (
    "call_id",
    "ref",
    "tool",
    "record",
    "outcome",
    "attempt",
    "receipt",
    "sha256",
    "request_sha256",
    "replay_key",
    "model",
    "request_id",
    "code",
    "owner",
    "status",
    "interaction_id",
    "task_id",
    "lane",
    "evidence",
    "refusals",
    "revision",
    "scenario",
    "profile",
    "chooser",
)
"""Payload fields a span may carry: identifiers, hashes, counts and codes."""
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
EXPORT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SpanSpec:
    """One span to emit: times in nanoseconds since the epoch, parent by index (None: the root)."""

    name: str
    start: int
    end: int
    parent: int | None
    attributes: dict[str, Any] = field(default_factory=dict)


def nanos(time: str) -> int:
    return int(datetime.fromisoformat(time).timestamp() * 1_000_000_000)


def span_specs(
    thread: str, values: Mapping[str, Any], ledger: Sequence[Mapping[str, Any]]
) -> list[SpanSpec]:
    """The run's spans, parents first (pure: the same ledger gives the same spans)."""
    if not ledger:
        return []
    times = [nanos(event["time"]) for event in ledger]
    specs = [SpanSpec("warrant.run", min(times), max(times), None, _run_attributes(thread, values))]
    turns: dict[tuple[str, int], int] = {}
    started: dict[tuple[str, str], int] = {}
    for event, at in zip(ledger, times, strict=True):
        lane = event.get("lane") or "main"
        key = (lane, event["turn"])
        if key not in turns:
            turns[key] = len(specs)
            specs.append(
                SpanSpec(
                    "warrant.turn",
                    at,
                    _turn_end(ledger, times, key),
                    0,
                    {"warrant.turn": event["turn"], "warrant.lane": lane},
                )
            )
        parent = turns[key]
        specs.append(
            SpanSpec(f"warrant.{_node(event)}.{event['type']}", at, at, parent, _attributes(event))
        )
        call = event["payload"].get("call_id")
        if event["type"] == EventKind.EXECUTING and call:
            started[(lane, call)] = at
        elif event["type"] == EventKind.EXECUTED and (lane, call) in started:
            specs.append(
                SpanSpec("warrant.call", started.pop((lane, call)), at, parent, _attributes(event))
            )
    return specs


def _turn_end(ledger: Sequence[Mapping[str, Any]], times: list[int], key: tuple[str, int]) -> int:
    return max(
        at
        for event, at in zip(ledger, times, strict=True)
        if ((event.get("lane") or "main"), event["turn"]) == key
    )


def _node(event: Mapping[str, Any]) -> str:
    if event["type"] in NODE_OF:
        return NODE_OF[event["type"]]
    return "human" if str(event.get("actor", "")).startswith("human") else "guard"


def _attributes(event: Mapping[str, Any]) -> dict[str, Any]:
    payload = event.get("payload") or {}
    found = {f"warrant.{key}": payload[key] for key in SAFE_KEYS if plain(payload.get(key))}
    call = payload.get("call")
    if isinstance(call, Mapping):  # approved/refused: the call's id, tool and the ref, not its args
        found |= {
            f"warrant.call.{key}": call[key]
            for key in ("id", "name", "ref")
            if plain(call.get(key))
        }
    manifest = payload.get("manifest")
    if isinstance(manifest, Mapping):  # what reached the model: section hashes, not their text
        for section in manifest.get("sections", ()):
            found[f"warrant.section.{section['name']}.sha256"] = section["sha256"]
        found["warrant.omitted"] = [item["ref"] for item in manifest.get("omitted", ())]
        found["warrant.reminders.delivered"] = [
            reminder["id"] for reminder in manifest.get("reminders_delivered", ())
        ]
        found["warrant.reminders.dropped"] = [
            reminder["id"] for reminder in manifest.get("reminders_dropped", ())
        ]
        if manifest.get("response_schema"):
            found["warrant.response_schema"] = manifest["response_schema"]
    usage = payload.get("usage")
    if isinstance(usage, Mapping):
        found |= {
            f"warrant.usage.{key}": value for key, value in usage.items() if isinstance(value, int)
        }
    return found | {
        "warrant.seq": event["seq"],
        "warrant.actor": event.get("actor", ""),
        "warrant.seal": event.get("seal", ""),
    }


def plain(value: Any) -> bool:
    """A scalar short enough to carry as it is (an id, a count, a code), not a text."""
    return isinstance(value, str | int | float | bool) and not (
        isinstance(value, str) and len(value) > 300
    )


def _run_attributes(thread: str, values: Mapping[str, Any]) -> dict[str, Any]:
    found = {"warrant.thread": thread}
    for key in ("scenario", "chooser", "status", "request_sha256", "parent", "revision"):
        if plain(values.get(key)):
            found[f"warrant.{key}"] = values[key]
    return found


def emit(specs: Sequence[SpanSpec], provider: TracerProvider) -> None:
    """Emit `specs` through `provider`'s tracer, with their own times and parents."""
    from opentelemetry import trace

    tracer = provider.get_tracer("warrant")
    spans: list[Any] = []
    for spec in specs:
        context = trace.set_span_in_context(spans[spec.parent]) if spec.parent is not None else None
        span = tracer.start_span(
            spec.name, context=context, start_time=spec.start, attributes=spec.attributes
        )
        spans.append(span)
    for span, spec in reversed(list(zip(spans, specs, strict=True))):
        span.end(end_time=spec.end)


def otlp_configured(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return any(env.get(name) for name in ENDPOINT_VARIABLES)


def finished_spans(specs: Sequence[SpanSpec]) -> Sequence[ReadableSpan]:
    """The spans of `specs`, ended, with a resource naming the service."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "warrant"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    emit(specs, provider)
    provider.shutdown()
    return memory.get_finished_spans()


def export_otlp(spans: Sequence[ReadableSpan]) -> str | None:
    """Send `spans` to the OTLP/HTTP endpoint the environment names (`OTEL_EXPORTER_OTLP_*`);
    None when sent, else why not, in one line (the run itself stands either way)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    # As its interface: OTLPSpanExporter.shutdown itself carries no annotations.
    exporter: SpanExporter = OTLPSpanExporter(timeout=EXPORT_TIMEOUT_S)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is SpanExportResult.SUCCESS:
        return None
    return "the OTLP endpoint did not accept the trace (see OTEL_EXPORTER_OTLP_ENDPOINT)"
