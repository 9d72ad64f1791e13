"""Schedules: recurring work a person confirmed (`warrant schedule add`), run by `warrant worker`.

A schedule is not standing authority (seed 001 §22). It records who confirmed what, when: the
scenario and its manifest's sha256, the cron expression and time zone, the goal and chooser. Each
occurrence is a **new run** — its own thread (named by the schedule and the occurrence, so a
worker that dies mid-run finds the same run again), a fresh budget from the manifest, a link to the
schedule and occurrence in its ledger — and it never waits for people (`nodes.human`). An occurrence
is not run when:

- the scenario's manifest changed since the confirmation (`not_run`: confirm it again);
- the previous occurrence's run is still being advanced by another process (`skipped`).

After downtime, the missed occurrences run once, as the latest of them (`missed` counts the
others). Every occurrence handled leaves a record under its schedule, whatever became of it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, TypedDict, cast
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from langgraph.store.base import BaseStore, PutOp

from contract.errors import ErrorKind
from graph.build import store_of
from graph.runs.reading import RunError, reading_graph
from graph.runs.requests import RunRequest, pinned_request
from graph.runs.runner import OnEnd, OnEvent, start
from guards.finalize import ended_as
from guards.schedule import ScheduleLink, changed_since_confirmed

SCHEDULES = ("warrant", "schedules")
OCCURRENCES = ("warrant", "schedule-occurrences")
"""Under it, each schedule's occurrence records (a namespace apart: a search of `SCHEDULES` would
list them too)."""
MAX_MISSED_COUNTED = 1000
"""Missed occurrences counted one by one after downtime; beyond, the count says "at least"."""

OccurrenceEnd = Literal["started", "finished", "skipped", "not_run"]


class Schedule(TypedDict):
    id: str
    scenario: str
    """The scenario as admitted: a built-in id or the manifest's absolute path."""
    manifest_sha256: str
    cron: str
    tz: str
    goal: str | None
    """The goal given at confirmation; None runs the manifest's."""
    chooser: str
    confirmed_by: str
    confirmed_at: float
    last_occurrence: str | None
    """The latest occurrence handled (ISO 8601 with its offset)."""
    running: str | None
    """The occurrence whose run started and has not been seen to finish (a worker may have
    stopped mid-run; another may still be advancing it)."""
    removed_by: str | None


class Occurrence(TypedDict):
    schedule: str
    occurrence: str
    outcome: OccurrenceEnd
    thread: str | None
    reason: str
    missed: int
    """Earlier occurrences passed over since the last one handled (downtime)."""
    at: float


@dataclass(frozen=True)
class Due:
    occurrence: datetime
    missed: int


def checked_cron(cron: str, tz: str) -> ZoneInfo:
    """The schedule's time zone, once both are valid; a ValueError naming the bad one."""
    if not croniter.is_valid(cron):
        raise ValueError(f"--cron {cron!r} is not a cron expression (five fields: m h dom mon dow)")
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"--tz {tz!r} is not a time zone name (e.g. Europe/Berlin, UTC)") from None


def due(schedule: Schedule, now: datetime) -> Due | None:
    """The occurrence to run at `now`: the latest one at or before it and after the last handled
    (or the confirmation), with how many earlier ones it passes over; None when none is due."""
    zone = ZoneInfo(schedule["tz"])
    last = schedule["last_occurrence"]
    since = _instant(last) if last else datetime.fromtimestamp(schedule["confirmed_at"], zone)
    latest: datetime = croniter(
        schedule["cron"], now.astimezone(zone) + timedelta(seconds=1)
    ).get_prev(datetime)
    if latest <= since:
        return None
    passed = croniter(schedule["cron"], since.astimezone(zone))
    missed = 0
    while missed < MAX_MISSED_COUNTED and passed.get_next(datetime) < latest:
        missed += 1
    return Due(latest, missed)


def next_occurrence(schedule: Schedule, now: datetime) -> datetime:
    zone = ZoneInfo(schedule["tz"])
    found: datetime = croniter(schedule["cron"], now.astimezone(zone)).get_next(datetime)
    return found


@contextmanager
def schedule_store(db: str) -> Iterator[BaseStore]:
    with reading_graph(db) as graph:
        yield store_of(graph)


def confirm(
    db: str,
    scenario: str,
    cron: str,
    tz: str,
    goal: str | None,
    chooser: str,
    by: str,
    now: float,
) -> Schedule:
    """Record a schedule `by` confirmed: the scenario as admitted now (its manifest's sha256)."""
    checked_cron(cron, tz)
    request, pinned = pinned_request(scenario, goal, chooser, None, None)
    schedule = Schedule(
        id=f"sch-{secrets.token_hex(6)}",
        scenario=request.reference,
        manifest_sha256=pinned["grant"]["manifest_sha256"],
        cron=cron,
        tz=tz,
        goal=goal,
        chooser=request.chooser,
        confirmed_by=by,
        confirmed_at=now,
        last_occurrence=None,
        running=None,
        removed_by=None,
    )
    with schedule_store(db) as store:
        store.put(SCHEDULES, schedule["id"], dict(schedule), index=False)
    return schedule


def schedules(db: str, removed: bool = False) -> list[tuple[Schedule, Occurrence | None]]:
    """Each schedule (oldest first) with its latest occurrence record."""
    with schedule_store(db) as store:
        return [(schedule, _latest(store, schedule)) for schedule in _listed(store, removed)]


def _listed(store: BaseStore, removed: bool = False) -> list[Schedule]:
    """The schedules, oldest first; the removed ones too with `removed`."""
    found = [
        _schedule(item.value)
        for item in store.search(SCHEDULES, limit=10_000)
        if tuple(item.namespace) == SCHEDULES
    ]
    listed = [s for s in found if removed or s["removed_by"] is None]
    return sorted(listed, key=lambda s: s["confirmed_at"])


def occurrences(db: str, schedule_id: str) -> list[Occurrence]:
    """A schedule's occurrence records, oldest first."""
    with schedule_store(db) as store:
        items = store.search((*OCCURRENCES, schedule_id), limit=10_000)
        return sorted((_occurrence(item.value) for item in items), key=lambda o: o["at"])


def remove(db: str, schedule_id: str, by: str) -> Schedule:
    """Stop a schedule: it is kept, marked removed by `by`, and runs no more occurrences."""
    with schedule_store(db) as store:
        schedule = _found(store, schedule_id)
        removed = schedule | {"removed_by": by}
        store.put(SCHEDULES, schedule_id, dict(removed), index=False)
        return removed


def run_due(
    db: str, now: datetime, on_event: OnEvent, on_end: OnEnd | None = None
) -> list[Occurrence]:
    """Handle every schedule at `now`, one after another: an occurrence cut short (a worker
    stopped mid-run) goes on to its handover, then the due one runs; each handled leaves a
    record, whatever became of it. `on_end`: told each run that ends (`runner.start`)."""
    with schedule_store(db) as store:
        listed = _listed(store)
    handled = []
    for schedule in listed:
        running = None
        if schedule["running"] is not None:
            cut = _occurrence_of(db, schedule, schedule["running"])
            try:
                handled.append(_finish(db, schedule, cut, on_event, on_end))
            except RunError as exc:
                if exc.kind is not ErrorKind.BUSY:
                    raise
                running = cut  # another process is advancing it
        if (occurrence := due(schedule, now)) is not None:
            handled.append(_handle(db, schedule, running, occurrence, on_event, on_end))
    return handled


def _handle(
    db: str,
    schedule: Schedule,
    running: Occurrence | None,
    due_now: Due,
    on_event: OnEvent,
    on_end: OnEnd | None,
) -> Occurrence:
    at = due_now.occurrence.isoformat()
    record = Occurrence(
        schedule=schedule["id"],
        occurrence=at,
        outcome="not_run",
        thread=None,
        reason="",
        missed=due_now.missed,
        at=time.time(),
    )
    if running is not None:
        reason = (
            f"the occurrence at {running['occurrence']} is still running"
            f" (thread {running['thread']})"
        )
        return _recorded(db, schedule, record | {"outcome": "skipped", "reason": reason})
    try:
        request = occurrence_request(schedule, at)
    except (ValueError, RunError) as exc:
        return _recorded(db, schedule, record | {"reason": str(exc)})
    started = _recorded(db, schedule, record | {"outcome": "started", "thread": request.thread_id})
    return _finish(db, schedule, started, on_event, on_end, request)


def occurrence_request(schedule: Schedule, occurrence: str) -> RunRequest:
    """The run of one occurrence, admitted now; a changed scenario is a ValueError."""
    message_id = f"{schedule['id']}@{occurrence}"
    request, pinned = pinned_request(
        schedule["scenario"], schedule["goal"], schedule["chooser"], None, message_id
    )
    link = ScheduleLink(
        id=schedule["id"],
        manifest_sha256=schedule["manifest_sha256"],
        confirmed_by=schedule["confirmed_by"],
        occurrence=occurrence,
    )
    if problem := changed_since_confirmed(link, pinned["grant"]["manifest_sha256"]):
        raise ValueError(problem)
    return replace(request, schedule=link)


def _finish(
    db: str,
    schedule: Schedule,
    started: Occurrence,
    on_event: OnEvent,
    on_end: OnEnd | None,
    request: RunRequest | None = None,
) -> Occurrence:
    """Run (or go on with) a started occurrence to its handover, and record that it finished."""
    request = request or occurrence_request(schedule, started["occurrence"])
    result = start(request, db, on_event, on_end=on_end)
    ended = ended_as(result.values.get("handover") or {"status": result.values.get("status", "")})
    finished = started | {"outcome": "finished", "reason": f"the run ended {ended}"}
    return _recorded(db, schedule, finished)


def _recorded(db: str, schedule: Schedule, record: Occurrence) -> Occurrence:
    """Save an occurrence's record and move its schedule along (past a new occurrence; running
    one, or done with it): one batch."""
    with schedule_store(db) as store:
        moved = _found(store, schedule["id"])
        if record["outcome"] == "started":
            moved |= {"running": record["occurrence"]}
        elif moved["running"] == record["occurrence"]:
            moved |= {"running": None}
        last = moved["last_occurrence"]
        if last is None or _instant(record["occurrence"]) > _instant(last):
            moved |= {"last_occurrence": record["occurrence"]}
        store.batch(
            [
                PutOp(
                    (*OCCURRENCES, schedule["id"]), record["occurrence"], dict(record), index=False
                ),
                PutOp(SCHEDULES, schedule["id"], dict(moved), index=False),
            ]
        )
    return record


def _instant(occurrence: str) -> datetime:
    return datetime.fromisoformat(occurrence)


def _occurrence_of(db: str, schedule: Schedule, occurrence: str) -> Occurrence:
    with schedule_store(db) as store:
        item = store.get((*OCCURRENCES, schedule["id"]), occurrence)
    if item is None:
        raise RunError(
            ErrorKind.BROKEN_LEDGER,
            f"schedule {schedule['id']}: occurrence {occurrence} has no record",
        )
    return _occurrence(item.value)


def _latest(store: BaseStore, schedule: Schedule) -> Occurrence | None:
    last = schedule["last_occurrence"]
    item = store.get((*OCCURRENCES, schedule["id"]), last) if last else None
    return _occurrence(item.value) if item else None


def _found(store: BaseStore, schedule_id: str) -> Schedule:
    item = store.get(SCHEDULES, schedule_id)
    if item is None:
        raise RunError(
            ErrorKind.NOT_FOUND, f"no schedule {schedule_id!r}: see `warrant schedule list`"
        )
    return _schedule(item.value)


def _schedule(value: dict[str, Any]) -> Schedule:
    return cast("Schedule", {key: value.get(key) for key in Schedule.__annotations__})


def _occurrence(value: dict[str, Any]) -> Occurrence:
    return cast("Occurrence", {key: value.get(key) for key in Occurrence.__annotations__})
