"""`warrant triage FOLDER`: a nightly folder to its morning report in one command.

The folder's manifest is drafted by `scenario new`'s rules (the folder named on the command line
is the approval; what was left out is said on stderr) and kept beside the records as
`.warrant-triage.toml`, a hidden name no drafted glob matches: admission pins a manifest file by
its sha256, and `warrant show THREAD` or a resume finds it there. The run is the triage baseline
under the guard like any run (its thread, ledger, handover); the report printed is rendered from
the triage receipts' structured report (`tools/logs/morning.py`), merged over the families.

Exit codes: 0; with `--fail-on new`, 1 when a test failed that never failed before (per the
history) or a bucket is new; with `--fail-on any`, 1 when anything failed; 2 on a usage error.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from contract.errors import ErrorKind
from graph.cli.common import (
    DbOption,
    chosen_db,
    drafted,
    fail,
    one_line_failures,
    print_json,
    stderr,
)
from graph.present.escaping import escaped

DRAFT = ".warrant-triage.toml"
"""The drafted manifest's name in the folder."""


class FailOn(StrEnum):
    new = "new"
    any = "any"


def register(app: typer.Typer) -> None:
    app.command()(triage)


def triage(
    folder: Annotated[Path, typer.Argument(help="A nightly's folder: its logs and history.")],
    history: Annotated[
        Path | None,
        typer.Option(help="The run history CSV to read against (a file inside FOLDER)."),
    ] = None,
    goal: Annotated[str | None, typer.Option(help="Replace the drafted goal.")] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="The handover JSON, with the report as `triage`.")
    ] = False,
    markdown: Annotated[bool, typer.Option("--md", help="The report as Markdown tables.")] = False,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(help="Exit 1 on new failures (`new`) or on any failure (`any`)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Triage a nightly folder and print the morning report (one command, no manifest to edit)."""
    from graph.delivery.artifacts import deliver
    from graph.runs.requests import admit_request
    from graph.runs.runner import start
    from scenario.draft import folder_scenario_id

    if not folder.is_dir():
        fail(ErrorKind.BAD_INPUT, f"{folder} is not a folder")
    target = folder / DRAFT
    checked = None if history is None else partial(_check_history, folder, history)
    scenario, left_out = drafted(folder, target, folder_scenario_id(folder, "nightly"), checked)
    stderr.print(
        f"drafted {escaped(str(target))}: {len(scenario.records)} record(s) of {escaped(str(folder))}"
    )
    for line in left_out:
        stderr.print(f"left out: {escaped(line)}")
    if not scenario.families:
        fail(ErrorKind.BAD_INPUT, f"{folder} holds no family of logs to triage")
    with one_line_failures():
        request = admit_request(str(target.resolve()), goal, "scripted", None, None)
        result = start(request, chosen_db(db), lambda _: None, on_end=deliver)
    stderr.print(f"thread {escaped(result.thread)}: `warrant show {escaped(result.thread)}`")
    handover = result.handover
    report = morning_of(handover)
    _print(handover, report, json_output, markdown)
    if fail_on is not None and failing(report, fail_on.value):
        raise typer.Exit(1)


def _check_history(folder: Path, history: Path, text: str, left_out: list[str]) -> None:
    """`--history` names a file inside the folder that the draft approves as the history the
    triage reads (its first); anything else is refused: a manifest's records are its folder's."""
    inside = folder.resolve()
    try:
        relative = history.resolve().relative_to(inside).as_posix()
    except ValueError:
        raise ValueError(
            f"--history {history}: outside {folder}; put the history in the nightly's folder"
        ) from None
    if why := next((line for line in left_out if line.startswith(f"{relative}:")), None):
        raise ValueError(f"--history {why}")
    first = _first_history(text)
    if first != relative:
        raise ValueError(
            f"--history {history}: not the history the draft approves first"
            f" ({first or 'none'}); keep one history in {folder}"
        )


def _first_history(text: str) -> str | None:
    import tomllib

    records = tomllib.loads(text).get("record", [])
    return next((r.get("path") for r in records if r.get("kind") == "history"), None)


def morning_of(handover: dict[str, Any]) -> dict[str, Any] | None:
    """The morning report over the run's triage receipts (several families merged), or none."""
    from tools.logs.morning import merged

    reports = [
        (item["ref"], item["triage"])
        for item in handover.get("evidence") or ()
        if item.get("tool") == "triage" and isinstance(item.get("triage"), dict)
    ]
    return merged(reports) if reports else None


def failing(report: dict[str, Any] | None, rule: str) -> bool:
    """Whether `--fail-on rule` fails: `any` on a failing test, `new` on a new failure or a new
    bucket. No report (nothing triaged) fails either: what was not read is not a pass."""
    if report is None:
        return True
    if rule == "any":
        return bool(report["summary"]["fail"])
    new_tests = any(row["new"] for row in report["tests"] if row["status"] == "fail")
    return new_tests or any(bucket["status"] == "new" for bucket in report["buckets"])


def _print(
    handover: dict[str, Any], report: dict[str, Any] | None, json_output: bool, markdown: bool
) -> None:
    from graph.present.morning import morning_markdown, morning_text
    from graph.present.render import handover_markdown

    if json_output:
        print_json({**handover, "triage": report})
    elif report is None:
        sys.stdout.write(handover_markdown(handover))
    elif markdown:
        sys.stdout.write(morning_markdown(report))
    else:
        sys.stdout.write(morning_text(report))
