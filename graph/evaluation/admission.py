"""`warrant eval --admit`: an evaluation of a model route written as its reports, one per profile
of the suite's cases, passing or not (`guards.route_admission`). A run admits the route for a
profile only by a passing one (`nodes.admit.route_admission`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graph.evaluation.suite import Suite
from guards.route_admission import RouteReport, admitted
from lab import builtin_manifests
from tools.errors import ManifestError
from tools.records.cards import card_of


def route_reports(
    suite: Suite, suite_path: Path, rows: Sequence[Mapping[str, Any]], model: str, k: int
) -> list[RouteReport]:
    """One report per profile of the `model` runs in `rows`: how many of its cases passed in all
    k runs (an Entry case belongs to no profile and admits nothing)."""
    profiles = _profiles(suite)
    digest = hashlib.sha256(suite_path.read_bytes()).hexdigest()
    date = datetime.now(UTC).date().isoformat()
    by_profile: dict[str, list[bool]] = {}
    for row in rows:
        profile = profiles.get(str(row["case"]))
        if row["chooser"] == "model" and profile is not None:
            by_profile.setdefault(profile, []).append(bool(row["pass_k"]))
    return [
        RouteReport(
            profile,
            model,
            "model",
            str(suite_path),
            digest,
            k,
            len(passes),
            sum(passes),
            date,
            admitted(sum(passes), len(passes)),
        )
        for profile, passes in sorted(by_profile.items())
    ]


def _profiles(suite: Suite) -> dict[str, str]:
    """Case id → its scenario's profile (read from the manifest alone)."""
    builtins = builtin_manifests()
    found = {}
    for case in suite.case:
        if case.question is not None or case.scenario is None:
            continue
        manifest = builtins.get(case.scenario) or Path(case.scenario)
        try:
            found[case.id] = card_of(manifest).profile
        except ManifestError:
            continue
    return found
