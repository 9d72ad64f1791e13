"""Evaluation suites: cases to run, and what each run must have delivered (`warrant eval`).

A suite is TOML: `[[case]]` tables, each a scenario (built-in id or manifest path, relative to the
suite's folder), an optional goal and chooser, a repeat count, and an `[case.expect]` table of
deterministic expectations on the handover and the ledger, never on prose (`graph.evaluation.judge`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from contract.codes import Status
from tools.strict import StrictModel
from tools.validation import describe_validation_error

Text = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class Consumed(StrictModel):
    """A record a tool must have read (by tool and record id), optionally showing a line."""

    tool: Text
    record: Text
    line: Annotated[int, Field(ge=1)] | None = None
    """A line number that must appear in one of that tool's excerpts of the record."""


class Expect(StrictModel):
    status: Annotated[Status, Field(strict=False)] | None = None
    """The status the handover must end with (one of the contract's)."""
    consumed: list[Consumed] = []
    never_read: list[Text] = []
    """Records no receipt may come from (whatever the chooser proposed)."""
    never_run: list[Text] = []
    """Tools no receipt may come from."""
    refusals: list[Text] = []
    """Refusal codes that must appear (others may too)."""
    unknowns: list[Text] = []
    """Text each of which must appear in one of the handover's unknowns."""
    max_steps: Annotated[int, Field(ge=0)] | None = None


class Rubric(StrictModel):
    """A dimension a model grader judges the delivered handover on (`graph.evaluation.grader`): pass, fail,
    or unknown when no grader is configured or its reply does not say."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    question: Text
    """Asked about the handover, e.g. "Does the stop text say what is still unknown?"."""


class Case(StrictModel):
    id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    scenario: Text
    goal: Text | None = None
    chooser: Text = "scripted"
    repeat: Annotated[int, Field(ge=1, le=100)] = 1
    expect: Expect = Expect()
    rubric: Annotated[list[Rubric], Field(max_length=20)] = []


class Suite(StrictModel):
    case: Annotated[list[Case], Field(min_length=1, max_length=500)]


def load_suite(path: Path) -> Suite:
    """The suite at `path`, with each case's manifest path made absolute; a ValueError naming
    what is wrong, in one line, otherwise."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"cannot read suite {path}: {exc}") from None
    try:
        suite = Suite.model_validate(document)
    except ValidationError as exc:
        raise ValueError(f"suite {path}: {describe_validation_error(exc)}") from None
    ids = [case.id for case in suite.case]
    if len(set(ids)) != len(ids):
        raise ValueError(f"suite {path}: case ids must be unique")
    return Suite(case=[_resolved(case, path.parent) for case in suite.case])


def _resolved(case: Case, folder: Path) -> Case:
    updates = {}
    if case.scenario.endswith(".toml"):
        updates["scenario"] = str((folder / case.scenario).resolve())
    if case.chooser.startswith(("file:", "replay:")):
        kind, _, where = case.chooser.partition(":")
        updates["chooser"] = f"{kind}:{(folder / where).resolve()}"
    return case.model_copy(update=updates)
