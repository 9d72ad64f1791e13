"""Time while parked: a run waiting only for people does not spend its work deadline.

The work deadline (`deadline_s` from admission) measures the run's own work. While every step waits
for a person the run is parked; when the people have replied, the deadline moves on by the time
parked, but never past the manifest's hard `expires_at`. Each interaction has its own reply
deadline (`reply_s` after it was asked); a reply after it finds the interaction expired. Steps and
model usage are never given back.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any


def hard_end(budget: Mapping[str, Any]) -> float | None:
    """The manifest's `expires_at` (as the grant keeps it, ISO 8601 text) in epoch seconds."""
    expires_at = budget.get("expires_at")
    return datetime.fromisoformat(expires_at).timestamp() if expires_at else None


def admitted_deadline(at: float, budget: Mapping[str, Any]) -> float:
    """`deadline_s` after admission, or the hard end if it comes first."""
    return _capped(at + budget["deadline_s"], hard_end(budget))


def unparked_deadline(
    deadline_at: float, asked_at: float, resolved_at: float, budget: Mapping[str, Any]
) -> float:
    """The work deadline once people have replied: moved on by the time parked (from the asking
    to the resolution), never past the hard end."""
    return _capped(deadline_at + max(0.0, resolved_at - asked_at), hard_end(budget))


def reply_by(asked_at: float, budget: Mapping[str, Any]) -> float:
    """When an interaction expires."""
    return asked_at + float(budget.get("reply_s", 24 * 3600))


def _capped(deadline: float, end: float | None) -> float:
    return deadline if end is None else min(deadline, end)
