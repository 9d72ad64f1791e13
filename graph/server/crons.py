"""LangGraph crons as Warrant schedules: a cron is a schedule its creator confirms, with the
embedded schedules' semantics where the server can keep them (`graph.runs.schedules`).

At `crons.create` the auth handler admits the cron's run input as the server would admit a run
(built-in ids and manifests under `$WARRANT_SCENARIO_ROOTS`), and writes into it the schedule link
(`guards.schedule.ScheduleLink`): the cron's id, the manifest's sha256 now, and the caller who
confirmed it. Each occurrence the server starts is then a new run on a new thread with a fresh
budget that waits for nobody, kept when it ends (the server would delete a cron run's thread), and one whose manifest changed since is not admitted (the run fails
with that one line). The server runs a missed occurrence once when it comes back. A cron on a
thread (its occurrences would share one run's state) is refused, and so is changing a cron: a
changed schedule is a new confirmation. Only a cron's creator sees, changes or deletes it
(`OWNER` in its metadata, a filter the server applies).

Not kept on the server: skipping an occurrence while the previous one still runs (each
occurrence is its own thread, and the server does not look).
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph_sdk import Auth

from guards.schedule import ScheduleLink
from nodes.admit import admission, checked_input

OWNER = "warrant_owner"
"""The metadata key naming a cron's creator: set by the server, never by a client."""


class CronRefused(Auth.exceptions.HTTPException):
    def __init__(self, detail: str) -> None:
        super().__init__(status_code=403, detail=detail)


async def confirm_cron(identity: str, value: Auth.types.CronsCreate) -> None:
    """Admit a cron's run input now and link it to the cron as a schedule `identity` confirmed;
    a `CronRefused` naming what is wrong otherwise."""
    if value.get("thread_id") is not None:
        raise CronRefused(
            "a schedule's occurrences are new runs: a cron on a thread is refused"
            " (create it without one)"
        )
    payload = value.get("payload") or {}
    given = payload.get("input")
    if not isinstance(given, dict):
        raise CronRefused('a cron\'s input is a run input: {"scenario": …}')
    if "schedule" in given:
        raise CronRefused("a cron's input carries no schedule: the server links it to the cron")
    try:
        reference, goal, chooser = checked_input(given)  # type: ignore[arg-type]
        pinned = await asyncio.to_thread(admission, reference, goal, chooser, (), True)
    except ValueError as exc:
        raise CronRefused(f"the cron's input is refused: {exc}") from None
    link = ScheduleLink(
        id=f"cron:{value.get('cron_id')}",
        manifest_sha256=pinned["grant"]["manifest_sha256"],
        confirmed_by=identity,
    )
    given["schedule"] = dict(link)
    payload["on_completion"] = "keep"  # an occurrence's thread is its ledger: never deleted
    metadata: dict[str, Any] = value.setdefault("metadata", {})  # type: ignore[typeddict-item]
    metadata[OWNER] = identity


def schedule_problem(kwargs: dict[str, Any]) -> str | None:
    """Why a run request's schedule link is refused, or None: only the server's cron scheduler
    starts a run linked to a cron, and only to that cron (its `cron_id`, set by the server)."""
    given = kwargs.get("input")
    if not isinstance(given, dict) or "schedule" not in given:
        return None
    link = given["schedule"]
    cron_id = ((kwargs.get("config") or {}).get("configurable") or {}).get("cron_id")
    if cron_id is None or not isinstance(link, dict) or link.get("id") != f"cron:{cron_id}":
        return "a run's schedule link is written by the server into a cron's input, never given"
    return None
