"""Run control over the server's API: the owner's stop (`runs.cancel`) and a person's correction
(a store put in one shape), both taken by the run where `warrant stop` and `warrant correct` leave
theirs (`nodes.control`).

A Warrant run is never cut by the server: a hard cancel would drop a call in flight unreceipted.
`runs.cancel` on a run's thread records its owner's stop instead (the caller who started the run,
`started_by`; anyone else is refused 403) and answers 202: the run ends at its next safe point, its
handover `stopped`, naming who stopped it and when. A parked run has nothing in flight to cancel: the
stop is recorded and the run ends `stopped` when its interactions are resumed (a reply of
`withdrawn` withdraws them), as `warrant stop` does embedded.

A correction is put as `{"correction": {"text": "…"}}` under the run's `control` namespace with the
key `correction`; like an answer, any authenticated caller may give one, signed with their identity
and timed by the server, numbered here (`correction-N`) so the run takes each once, in order.
"""

from __future__ import annotations

import json
import time
from typing import Any, NoReturn

from langgraph.store.base import BaseStore
from langgraph_sdk import Auth

from contract.codes import Ending
from contract.text import storable_text
from guards.finalize import ended_as
from ledger.record import RunRecord
from ledger.store import CONTROL
from nodes.control import (
    CORRECTION_KEYS,
    MAX_TEXT,
    STOP,
    Correction,
    CorrectionRefused,
    StopRequest,
    next_correction,
    stop_put,
)
from nodes.human import WITHDRAWN

CANCELLED = "stopped through the server (runs.cancel)"
"""The reason a stop given by `runs.cancel` records (the API carries none)."""


class Refused(Auth.exceptions.HTTPException):
    """A control request refused, with the status and the one line the caller gets."""


async def _server_parts() -> tuple[Any, BaseStore]:
    """The server's checkpointer and store (Warrant's own, named in `langgraph.json`)."""
    from langgraph_api._checkpointer import get_checkpointer  # the running server's own
    from langgraph_api.store import get_store

    return await get_checkpointer(), await get_store()


async def _run_values(checkpointer: Any, thread_id: str) -> dict[str, Any]:
    found = await checkpointer.aget_tuple(
        {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    )
    return dict(found.checkpoint.get("channel_values") or {}) if found else {}


async def stop_by_cancel(identity: str, thread_id: object) -> NoReturn:
    """Record the owner's stop of the run on `thread_id` and answer 202 (never a hard cancel);
    a `Refused` naming why otherwise."""
    if thread_id is None:
        raise Refused(403, "cancel a Warrant run by its thread and run id (runs.cancel)")
    thread = str(thread_id)
    checkpointer, store = await _server_parts()
    values = await _run_values(checkpointer, thread)
    if "admitted_at" not in values:
        raise Refused(409, f"the run on thread {thread} has not started: nothing to stop yet")
    owner = values.get("started_by")
    if owner != identity:
        raise Refused(403, f"only the run's owner ({owner or 'unknown'}) may stop it")
    if "handover" in values:
        raise Refused(
            409, f"the run on thread {thread} already ended ({ended_as(values['handover'])})"
        )
    record = RunRecord(store, thread)
    if await record.avalue(CONTROL, STOP) is None:
        request = StopRequest(by=identity, at=time.time(), reason=CANCELLED)
        await record.awrite([stop_put(record, request)])
    if values.get("pending"):
        raise Refused(
            202,
            f"stop recorded: the run is parked and ends {Ending.STOPPED.value} when its"
            f" interactions are resumed (a reply of {json.dumps(WITHDRAWN)} withdraws them)",
        )
    raise Refused(202, f"stop recorded: the run ends {Ending.STOPPED.value} at its next safe point")


async def numbered_correction(identity: str, thread: str, value: Auth.types.StorePut) -> None:
    """Make a correction put into the run's next numbered correction, signed by `identity`; a
    `Refused` naming why when it is not one."""
    given = value.get("value")
    inner = (
        given.get("correction")
        if isinstance(given, dict) and set(given) == {"correction"}
        else None
    )
    text = inner.get("text") if isinstance(inner, dict) else None
    if not isinstance(text, str):
        raise Refused(403, 'a correction is {"correction": {"text": "…"}} under the key correction')
    if not text.strip() or len(text) > MAX_TEXT:
        raise Refused(403, f"a correction is 1 to {MAX_TEXT} characters of text")
    checkpointer, store = await _server_parts()
    values = await _run_values(checkpointer, thread)
    if "admitted_at" not in values or "handover" in values:
        raise Refused(409, f"no running run on thread {thread} to correct")
    correction = Correction(by=identity, at=time.time(), text=storable_text(text))
    record = RunRecord(store, thread)
    try:
        put = next_correction(record, await record.avalues(CORRECTION_KEYS), correction)
    except CorrectionRefused as exc:
        raise Refused(409, str(exc)) from None
    value["key"], value["value"], value["index"] = put.key, dict(put.value or {}), False
