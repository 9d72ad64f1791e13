"""Where evaluation reports of model routes are kept and found: `admissions/PROFILE/*.json` under
`$WARRANT_ADMISSIONS` (folders, `os.pathsep`), the manifest's own folder and the project's
`evals/`. A report is matched by what it says (profile, route identity), never by a path built
from them, and verified before it decides (`guards.route_admission`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from guards.route_admission import RouteReport

FOLDER_ENV = "WARRANT_ADMISSIONS"
OVERRIDE_ENV = "WARRANT_ROUTE_OVERRIDE"
SHIPPED = Path(__file__).resolve().parents[2] / "evals" / "admissions"
MAX_REPORTS = 500


def admission_folders(manifest: Path) -> list[Path]:
    configured = [Path(part) for part in os.environ.get(FOLDER_ENV, "").split(os.pathsep) if part]
    return [*configured, manifest.resolve().parent / "admissions", SHIPPED]


def reports_in(folders: Iterable[Path], profile: str) -> list[RouteReport]:
    """The readable reports of `profile` in `folders` (a file that is not one is skipped)."""
    found: list[RouteReport] = []
    for folder in folders:
        where = folder / profile
        if not where.is_dir():
            continue
        for path in sorted(where.glob("*.json"))[:MAX_REPORTS]:
            try:
                report = RouteReport(**json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError):
                continue
            if report.profile == profile:
                found.append(report)
    return found


def write_route_report(folder: Path, report: RouteReport) -> Path:
    """`folder/PROFILE/MODEL-SHA.json` (the model's name made a file name, the first 12 digits of
    its route's identity digest), written whole: a newer evaluation of the same route replaces
    the older."""
    safe = "".join(char if char.isalnum() or char in "._-" else "_" for char in report.model)
    name = f"{safe[:100] or 'route'}-{report.route_sha256[:12]}"
    target = folder / report.profile / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    fields = {key: value for key, value in asdict(report).items() if value is not None}
    target.write_text(json.dumps(fields, indent=1) + "\n", encoding="utf-8")
    return target


def override_reason() -> str | None:
    """`$WARRANT_ROUTE_OVERRIDE`: why an unadmitted route runs anyway (recorded), or None."""
    given = os.environ.get(OVERRIDE_ENV, "").strip()
    return given[:500] or None
