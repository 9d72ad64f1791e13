"""`warrant eval --admit`: an evaluation of a model route written as its reports, one per profile
of the suite's cases, passing or not (`guards.route_admission`), each naming the route's identity
and its digest and holding every case's verdicts, from which its figures are computed. A run
admits the route for a profile only by the newest report of the same identity, passing
(`nodes.admit.route_admission`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contract.errors import ManifestError
from graph.evaluation.suite import Suite
from guards.route_admission import RouteReport, admitted, identity_digest, measured
from lab import builtin_manifests
from nodes.choosers.route import Route
from scenario.cards import card_of


def route_reports(
    suite: Suite,
    suite_path: Path,
    rows: Sequence[Mapping[str, Any]],
    route: Route,
    at: datetime | None = None,
) -> list[RouteReport]:
    """One report per profile of the model runs in `rows`: each case's verdicts, and from them
    how many cases passed in all their runs (k: the fewest runs a case had). An Entry case
    belongs to no profile and admits nothing. `at`: when (now by default)."""
    profiles = _profiles(suite)
    digest = hashlib.sha256(suite_path.read_bytes()).hexdigest()
    date = (at or datetime.now(UTC)).isoformat(timespec="seconds")
    identity = route.identity()
    by_profile: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        profile = profiles.get(str(row["case"]))
        if row["chooser"] == "model" and profile is not None:
            runs = [str(judged["verdict"]) for judged in row["judged"]]
            by_profile.setdefault(profile, []).append({"case": str(row["case"]), "runs": runs})
    reports = []
    for profile, results in sorted(by_profile.items()):
        found = measured(results)
        if isinstance(found, str):
            raise ValueError(f"the evaluation of profile {profile} cannot be reported: {found}")
        cases, passed, k = found
        reports.append(
            RouteReport(
                profile,
                route.model,
                "model",
                str(suite_path),
                digest,
                k,
                cases,
                passed,
                date,
                admitted(passed, cases),
                identity,
                identity_digest(identity),
                results,
            )
        )
    return reports


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
