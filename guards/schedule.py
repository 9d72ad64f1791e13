"""A scheduled run's link to the schedule a person confirmed: which one, which occurrence, and the
scenario as it was when they confirmed it.

A schedule is not standing authority (seed 001 §22): each occurrence is a new run admitted like any
other, and one whose manifest changed since the confirmation is not run at all — the person
confirmed that manifest, not whatever the file says today.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NotRequired, TypedDict

SCHEDULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9:._@+-]{0,99}")
SHA256 = re.compile(r"[0-9a-f]{64}")


class ScheduleLink(TypedDict):
    """What a scheduled run is started with (`RunInput.schedule`) and keeps in its state."""

    id: str
    """The schedule (`sch-…` embedded; `cron:<cron id>` for a LangGraph cron, written by the server)."""
    manifest_sha256: str
    """The scenario's manifest as confirmed."""
    confirmed_by: str
    occurrence: NotRequired[str]
    """The occurrence's time (ISO 8601 with its offset); a served cron's is its admission time."""


def link_of(value: object) -> ScheduleLink:
    """`value` as a schedule link, strictly typed; a ValueError naming what is wrong otherwise."""
    if not isinstance(value, dict):
        raise ValueError("the run input's schedule must be an object")
    if unknown := sorted(set(value) - {"id", "manifest_sha256", "confirmed_by", "occurrence"}):
        raise ValueError(f"the run input's schedule has unknown fields: {', '.join(unknown)}")
    for name, pattern in (("id", SCHEDULE_ID), ("manifest_sha256", SHA256)):
        given = value.get(name)
        if type(given) is not str or not pattern.fullmatch(given):
            raise ValueError(f"the run input's schedule {name} is missing or malformed")
    if type(value.get("confirmed_by")) is not str or not value["confirmed_by"]:
        raise ValueError("the run input's schedule names no one who confirmed it")
    link = ScheduleLink(
        id=value["id"], manifest_sha256=value["manifest_sha256"], confirmed_by=value["confirmed_by"]
    )
    if "occurrence" in value:
        link["occurrence"] = _instant(value["occurrence"])
    return link


def _instant(value: object) -> str:
    if type(value) is not str:
        raise ValueError("the run input's schedule occurrence must be ISO 8601 text")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("the run input's schedule occurrence is not an ISO 8601 time") from None
    if parsed.tzinfo is None:
        raise ValueError("the run input's schedule occurrence has no UTC offset")
    return value


def changed_since_confirmed(link: ScheduleLink, manifest_sha256: str) -> str | None:
    """Why the occurrence may not run because its scenario changed, or None."""
    if link["manifest_sha256"] == manifest_sha256:
        return None
    again = "create the cron again" if link["id"].startswith("cron:") else "`warrant schedule add`"
    return (
        f"the scenario changed since {link['confirmed_by']} confirmed schedule {link['id']}"
        f" (manifest sha256 {link['manifest_sha256'][:12]}… then, {manifest_sha256[:12]}… now):"
        f" confirm it again ({again})"
    )
