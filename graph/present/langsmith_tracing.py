"""LangSmith's traces of a run, with node inputs and outputs hidden: they would carry excerpts of
records, `share = "local"` ones included, to a remote service."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

from graph.present.tracing import plain

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
        f"warrant_{key}": known[key] for key in ("scenario", "chooser") if plain(known.get(key))
    }
    tags = [
        "warrant",
        *(f"{key}:{known[key]}" for key in ("scenario", "chooser") if plain(known.get(key))),
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
    kept = {key: data[key] for key in KEPT_IN_LANGSMITH if plain(data.get(key))}
    return kept | {
        "hidden_keys": sorted(str(key) for key in data if key not in kept),
        "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
    }
