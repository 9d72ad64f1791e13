"""A run as a trace: OpenTelemetry spans built from its sealed ledger, where its evidence was lost
on the way to the handover, and which reminders each model request delivered (`warrant trace`).

Spans are made after the fact from the ledger, with the ledger's own times: one span for the run,
one per turn, one per node's entry (choose, model, guard, human, tool, runtime) and one per tool
call (executing → executed). Their attributes are ids, refs, hashes, counts and codes only: no
record body, excerpt, summary, proposal text or stop text is ever an attribute, so nothing of a
`share = "local"` record leaves through a trace. Exported over OTLP/HTTP when
`OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is set.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from contract.codes import EventKind
from guards.citations import base_ref

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
    found = {f"warrant.{key}": payload[key] for key in SAFE_KEYS if _plain(payload.get(key))}
    call = payload.get("call")
    if isinstance(call, Mapping):  # approved/refused: the call's id, tool and the ref, not its args
        found |= {
            f"warrant.call.{key}": call[key]
            for key in ("id", "name", "ref")
            if _plain(call.get(key))
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


def _plain(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and not (
        isinstance(value, str) and len(value) > 300
    )


def _run_attributes(thread: str, values: Mapping[str, Any]) -> dict[str, Any]:
    found = {"warrant.thread": thread}
    for key in ("scenario", "chooser", "status", "request_sha256", "parent", "revision"):
        if _plain(values.get(key)):
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


EXPORT_TIMEOUT_S = 5.0
KEPT_IN_LANGSMITH = ("thread_id", "scenario", "chooser", "turn", "status", "profile")
"""The only state values LangSmith's run inputs and outputs keep; everything else is hidden."""


def langsmith_context(thread_id: str, run_input: object) -> Any:
    """Around a run's stream when LangSmith tracing is on (`LANGSMITH_TRACING`): LangGraph's own
    tracing, with Warrant's metadata and tags, through a client that hides node inputs and outputs
    (`hidden`), which would otherwise carry excerpts of records, `share = "local"` ones included,
    to a remote service. A no-op otherwise."""
    from langsmith import utils

    if not utils.tracing_is_enabled():
        return nullcontext()
    return _langsmith(thread_id, run_input)


@contextmanager
def _langsmith(thread_id: str, run_input: object) -> Iterator[None]:
    from langsmith import Client, tracing_context

    known = run_input if isinstance(run_input, Mapping) else {}
    metadata = {"warrant_thread": thread_id} | {
        f"warrant_{key}": known[key] for key in ("scenario", "chooser") if _plain(known.get(key))
    }
    tags = [
        "warrant",
        *(f"{key}:{known[key]}" for key in ("scenario", "chooser") if _plain(known.get(key))),
    ]
    client = Client(hide_inputs=hidden, hide_outputs=hidden)
    with tracing_context(client=client, metadata=metadata, tags=tags):
        yield
    client.flush()


class TracingRefused(RuntimeError):
    """LangSmith tracing is on where Warrant cannot hide what it would send."""


def hide_served_traces() -> None:
    """For the LangGraph server, which traces the runs it serves itself: when LangSmith tracing
    is on, every trace goes through a client that hides node inputs and outputs (`hidden`), as
    the command line's runs do. A langsmith that cannot be told so stops the server."""
    import langsmith
    from langsmith import Client, utils

    if not utils.tracing_is_enabled():
        return
    configure = getattr(langsmith, "configure", None)
    if configure is None:
        raise TracingRefused(
            "LANGSMITH_TRACING is on, but this langsmith cannot hide a served run's state (record"
            " excerpts) from its traces: turn tracing off or upgrade langsmith"
        )
    configure(client=Client(hide_inputs=hidden, hide_outputs=hidden))


def hidden(data: Mapping[str, Any]) -> dict[str, Any]:
    """What LangSmith may keep of a node's input or output: a few identifying scalars, the names
    of the other keys, and a digest of the whole."""
    text = json.dumps(data, sort_keys=True, default=repr)
    kept = {key: data[key] for key in KEPT_IN_LANGSMITH if _plain(data.get(key))}
    return kept | {
        "hidden_keys": sorted(str(key) for key in data if key not in kept),
        "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    }


@dataclass(frozen=True)
class Flow:
    """One evidence item on its way to the handover."""

    ref: str
    turn: int
    stored: bool
    sent: str
    """`in full`, `by reference (<reason>)`, `never` (no model request after it), or `not a model
    run` (a script or file chooser sees every item whole)."""
    cited: bool
    person: bool = False
    """A person's answer (an `H` ref, kind `human_answer`): it has no receipt by nature, and
    lacking one is no loss."""


def evidence_flow(handover: Mapping[str, Any], ledger: Sequence[Mapping[str, Any]]) -> list[Flow]:
    """For each evidence item of the main lane: stored, sent to the model, cited."""
    requests = [e for e in ledger if e["type"] == EventKind.REQUESTED and not e.get("lane")]
    cited = {
        base_ref(ref)
        for hypothesis in handover.get("hypotheses") or ()
        for ref in hypothesis.get("refs", ())
    }
    flows = []
    for item in handover.get("evidence") or ():
        turn = item.get("turn", 0)
        later = [e for e in requests if e["turn"] > turn]
        person = item["ref"].startswith("H") or item.get("kind") == "human_answer"
        flows.append(
            Flow(
                item["ref"],
                turn,
                bool(item.get("sha256")),
                _sent(item["ref"], later, bool(requests)),
                item["ref"] in cited,
                person,
            )
        )
    return flows


def _sent(ref: str, later: Sequence[Mapping[str, Any]], model_run: bool) -> str:
    if not model_run:
        return "not a model run"
    if not later:
        return "never"
    reasons = []
    for request in later:
        omitted = {o["ref"]: o["reason"] for o in request["payload"]["manifest"].get("omitted", ())}
        if ref not in omitted:
            return "in full"
        reasons.append(omitted[ref])
    return f"by reference ({reasons[-1]})"


def first_loss(flows: Sequence[Flow]) -> str | None:
    """The first hand-off where evidence was lost, in one line, or None."""
    for flow in flows:
        if not flow.stored and not flow.person:
            return f"{flow.ref} (turn {flow.turn}) has no stored receipt"
        if flow.sent not in ("in full", "not a model run"):
            return f"{flow.ref} (turn {flow.turn}) was stored but never sent to the model in full: {flow.sent}"
    for flow in flows:
        if not flow.cited:
            return f"{flow.ref} (turn {flow.turn}) reached the chooser but no hypothesis cites it"
    return None


@dataclass(frozen=True)
class ReminderFlow:
    """One model request's reminders: those it carried, delivered only once the model answered
    it (seed 001 §05: a reminder counts when it reached the model), and those left out, with why."""

    lane: str
    turn: int
    request_sha256: str
    answered: bool
    """An attempt with this request got the model's reply (not an error)."""
    delivered: list[str]
    carried: list[str] | None
    """The reminders in the request; None for a request recorded before reminders were listed."""
    dropped: list[dict[str, str]]
    """Each left out: its id and why (context sizing, over the count limit)."""


def reminder_flow(ledger: Sequence[Mapping[str, Any]]) -> list[ReminderFlow]:
    """For each model request of the run and its children, in ledger order: its reminders."""
    answered = {
        (event.get("lane") or "", event["payload"].get("request_sha256"))
        for event in ledger
        if event["type"] == EventKind.MODEL_REPLIED and event["payload"].get("error") is None
    }
    flows = []
    for event in ledger:
        if event["type"] != EventKind.REQUESTED:
            continue
        payload, lane = event["payload"], event.get("lane") or ""
        manifest = payload.get("manifest") or {}
        listed = manifest.get("reminders_delivered")
        carried = None if listed is None else [reminder["id"] for reminder in listed]
        sent = (lane, payload.get("sha256")) in answered
        flows.append(
            ReminderFlow(
                lane,
                event["turn"],
                str(payload.get("sha256", "")),
                sent,
                list(carried or ()) if sent else [],
                carried,
                [dict(item) for item in manifest.get("reminders_dropped", ())],
            )
        )
    return flows


def reminder_line(flow: ReminderFlow) -> str:
    """One request's reminders in one line: delivered, then dropped with why."""
    where = f"{flow.lane} turn {flow.turn}" if flow.lane else f"turn {flow.turn}"
    if flow.carried is None:
        delivered = "not recorded (a request from before reminders were listed)"
    elif flow.answered:
        delivered = ", ".join(flow.delivered) or "none"
    else:
        carried = ", ".join(flow.carried) or "none"
        delivered = f"none: the model never answered this request (it carried {carried})"
    dropped = ", ".join(f"{item['id']} ({item['reason']})" for item in flow.dropped) or "none"
    return f"{where} · delivered: {delivered} · dropped: {dropped}"
