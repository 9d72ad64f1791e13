"""LangGraph crons as Warrant schedules: a cron is a schedule its creator confirms, with the
embedded schedules' semantics where the server can keep them (`graph.runs.schedules`).

At `crons.create` the auth handler admits the cron's run input as the server would admit a run
(built-in ids and manifests under `$WARRANT_SCENARIO_ROOTS`), refuses a config a run would be
refused for (`graph.server.auth.config_problem`), and keeps the schedule link
(`guards.schedule.ScheduleLink`: the cron's id, the manifest's sha256 now, and the caller who
confirmed it) in the server's store (`LINKS`), with the sha256 of a random token it writes into
the cron's input in the link's place. The server alone writes a link into a run: when its cron
scheduler starts an occurrence, the run's `threads.create_run` handler finds the token and the
cron's id the server put in the run's configurable, checks the token against the kept sha256 and
writes the kept link into the run's input over it (`occurrence_of`). A run request with a schedule
link, a token of another cron, or a `cron_id` of its own is refused (403): `cron_id` is no key a
client may set. Deleting the cron forgets its link. Each occurrence is then a new run on a new
thread with a fresh budget that waits for nobody, kept when it ends (the server would delete a cron
run's thread), and one whose manifest changed since is not admitted (the run fails with that one
line). The server runs a missed occurrence once when it comes back. A cron on a
thread (its occurrences would share one run's state) is refused, and so is changing a cron: a
changed schedule is a new confirmation. Only a cron's creator sees, changes or deletes it
(`OWNER` in its metadata, a filter the server applies).

Not kept on the server: skipping an occurrence while the previous one still runs (each
occurrence is its own thread, and the server does not look). The token is in the cron's payload,
which its creator alone can read: its creator could start a run as an occurrence of their own
schedule by hand, never of another's.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import BaseStore
from langgraph_sdk import Auth

from guards.schedule import ScheduleLink, link_of
from nodes.admit import admission, checked_input

OWNER = "warrant_owner"
"""The metadata key naming a cron's creator: set by the server, never by a client."""
LINKS = ("warrant", "cron-links")
"""The server's store namespace of each cron's link, keyed by the cron's id: the link and the
sha256 of the token its occurrences carry."""
NEVER_GIVEN = (
    "a run's schedule link and its cron_id are the server's, written into a cron's occurrence,"
    " never given"
)


async def server_store() -> BaseStore:
    """The running server's store (Warrant's own, named in `langgraph.json`)."""
    from langgraph_api.store import get_store

    store: BaseStore = await get_store()
    return store


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


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
    cron_id = str(value.get("cron_id"))
    link = ScheduleLink(
        id=f"cron:{cron_id}",
        manifest_sha256=pinned["grant"]["manifest_sha256"],
        confirmed_by=identity,
    )
    token = secrets.token_urlsafe(32)
    kept = {"link": dict(link), "token_sha256": _digest(token)}
    await (await server_store()).aput(LINKS, cron_id, kept, index=False)
    given["schedule"] = token  # the link's place: the server writes the link over it
    payload["on_completion"] = "keep"  # an occurrence's thread is its ledger: never deleted
    metadata: dict[str, Any] = value.setdefault("metadata", {})  # type: ignore[typeddict-item]
    metadata[OWNER] = identity


async def occurrence_of(kwargs: Mapping[str, Any]) -> tuple[str, ScheduleLink] | None:
    """The cron a run request is an occurrence of, and the link the server writes into its input;
    None for a run of no schedule. Only the server's cron scheduler starts one: the cron's token in
    the input's `schedule`, its id in the configurable, as the server put them; anything else
    posing as one is a `CronRefused`."""
    given = kwargs.get("input")
    token = given.get("schedule") if isinstance(given, dict) else None
    if token is None:
        return None
    cron_id = ((kwargs.get("config") or {}).get("configurable") or {}).get("cron_id")
    if not isinstance(token, str) or not isinstance(cron_id, str):
        raise CronRefused(NEVER_GIVEN)
    found = await (await server_store()).aget(LINKS, cron_id)
    kept = found.value if found is not None else {}
    if not hmac.compare_digest(_digest(token), str(kept.get("token_sha256", ""))):
        raise CronRefused(NEVER_GIVEN)
    try:
        return cron_id, link_of(kept.get("link"))
    except ValueError:
        raise CronRefused(NEVER_GIVEN) from None


async def forget_cron(identity: str, cron_id: object) -> None:
    """A deleted cron's link, forgotten (its creator's deletion only): its token links nothing."""
    store = await server_store()
    found = await store.aget(LINKS, str(cron_id))
    if found is not None and (found.value.get("link") or {}).get("confirmed_by") == identity:
        await store.adelete(LINKS, str(cron_id))
