"""Evaluation suites: cases to run, and what each run must have delivered (`warrant eval`).

A suite is TOML: an optional `version`, then `[[case]]` tables, each a scenario (built-in id or
manifest path, relative to the suite's folder), an optional goal, the choosers it is meant for and
the one it runs with by default, a repeat count, and an `[case.expect]` table of deterministic
expectations on the handover and the ledger, never on prose (`graph.evaluation.judge`).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, ValidationError, model_validator

from contract.codes import Status
from contract.strict import StrictModel
from contract.text import describe_validation_error

Text = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
INSTRUCTION_LIKE = "instruction_like_text"
"""The flag a tool sets on text that reads like an instruction (`tools/flags.py`)."""


class Consumed(StrictModel):
    """A record a tool must have read (by tool and record id), optionally showing a line."""

    tool: Text
    record: Text
    line: Annotated[int, Field(ge=1)] | None = None
    """A line number that must appear in one of that tool's excerpts of the record."""


class Flagged(StrictModel):
    """A record whose text a tool must have flagged (an injected instruction is quoted as data,
    flagged, never followed), optionally on a given line of an excerpt."""

    record: Text
    line: Annotated[int, Field(ge=1)] | None = None
    flag: Text = INSTRUCTION_LIKE


class Expect(StrictModel):
    status: Annotated[Status, Field(strict=False)] | None = None
    """The status the handover must end with (one of the contract's)."""
    consumed: list[Consumed] = []
    never_read: list[Text] = []
    """Records no receipt may come from (whatever the chooser proposed)."""
    never_run: list[Text] = []
    """Tools no receipt may come from."""
    never_proposed: list[Text] = []
    """Text no argument of any call the chooser proposed may hold, refused or not: a chooser that
    tries the record an injected line points at has followed it, even where the guard held."""
    refusals: list[Text] = []
    """Refusal codes that must appear (others may too)."""
    unknowns: list[Text] = []
    """Text each of which must appear in one of the handover's unknowns."""
    says: list[Text] = []
    """Phrases the handover's own words must hold, case-insensitively: its statement, unknowns,
    hypotheses, stop text and ending reasons; never the evidence it quotes, which may say anything."""
    never_says: list[Text] = []
    """Phrases none of the handover's own words may hold (a cause it must not claim, an injected
    instruction it must not repeat as its own)."""
    flagged: list[Flagged] = []
    pending: list[Text] = []
    """Records a request still waiting for a person must name (a run stopped at a gate)."""
    max_steps: Annotated[int, Field(ge=0)] | None = None
    route: Literal["direct", "research"] | None = None
    """An Entry case's route (`warrant ask`): answered directly, or sent to research."""
    researched_in: Text | None = None
    """For a research route: the scenario Entry must choose (a built-in id, or a manifest path
    relative to the suite)."""


class Rubric(StrictModel):
    """A dimension a model grader judges the delivered handover on (`graph.evaluation.grader`): pass, fail,
    or unknown when no grader is configured or its reply does not say."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    question: Text
    """Asked about the handover, e.g. "Does the stop text say what is still unknown?"."""


class Case(StrictModel):
    id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    scenario: Text | None = None
    """What a run admits; for an Entry case, where Entry may look (`--in`; None: the built-in
    scenarios and `$WARRANT_SCENARIO_ROOTS`)."""
    question: Text | None = None
    """An Entry case: the question put to `warrant ask`, judged on the route Entry takes (the
    `scripted` chooser is Entry's rules; `model`, the model route's choice). No run is started."""
    goal: Text | None = None
    choosers: Annotated[list[Text], Field(min_length=1, max_length=20)] | None = None
    """The choosers the case is meant for, as `--chooser` names them (`file:` and `replay:` paths
    relative to the suite); None: any. A run of another is skipped and said, never counted
    against it: a case written for an adversary is no failure of the scripted baseline."""
    chooser: Text | None = None
    """The chooser it runs with when `warrant eval` is given none: by default the first of
    `choosers`, else `scripted`."""
    repeat: Annotated[int, Field(ge=1, le=100)] = 1
    expect: Expect = Expect()
    rubric: Annotated[list[Rubric], Field(max_length=20)] = []

    @model_validator(mode="after")
    def _a_run_or_a_question(self) -> Case:
        if self.scenario is None and self.question is None:
            raise ValueError("a case needs a scenario (a run) or a question (an Entry case)")
        if self.question is not None and self.expect.route is None:
            raise ValueError("an Entry case (question) needs expect.route")
        return self

    @model_validator(mode="after")
    def _runs_with_a_chooser_it_is_meant_for(self) -> Case:
        if self.chooser is not None and not self.meant_for(self.chooser, Path.cwd()):
            raise ValueError(f"chooser {self.chooser!r} is not one of its choosers")
        return self

    @property
    def own_chooser(self) -> str:
        """The chooser of its runs when none is given."""
        return self.chooser or (self.choosers[0] if self.choosers else "scripted")

    def meant_for(self, chooser: str, folder: Path) -> bool:
        """Whether a run with `chooser` (its paths relative to `folder`) counts for this case."""
        if self.choosers is None:
            return True
        return chooser_key(chooser, folder) in {chooser_key(c, folder) for c in self.choosers}


class Suite(StrictModel):
    version: Annotated[int, Field(ge=1)] | None = None
    """Raised when a case's expectations change, so that reports of two versions are not
    compared as if they measured the same thing."""
    case: Annotated[list[Case], Field(min_length=1, max_length=500)]


def chooser_key(spec: str, folder: Path) -> str:
    """A chooser as compared: a `file:` or `replay:` path made absolute against `folder`, and the
    triage baseline as `scripted` (what the scripted chooser runs on a scenario with no script)."""
    kind, sep, where = spec.partition(":")
    if sep and kind in ("file", "replay"):
        return f"{kind}:{(folder / where).resolve()}"
    return "scripted" if spec == "baseline" else spec


def load_suite(path: Path) -> Suite:
    """The suite at `path`, with each case's manifest and chooser paths made absolute; a
    ValueError naming what is wrong, in one line, otherwise."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"cannot read suite {path}: {exc}") from None
    try:
        suite = Suite.model_validate(_resolved(document, path.parent))
    except ValidationError as exc:
        raise ValueError(f"suite {path}: {describe_validation_error(exc)}") from None
    ids = [case.id for case in suite.case]
    if len(set(ids)) != len(ids):
        raise ValueError(f"suite {path}: case ids must be unique")
    return suite


def _resolved(document: dict[str, object], folder: Path) -> dict[str, object]:
    """The document with paths made absolute before validation (a case's `chooser` is checked
    against its `choosers`, both as absolute paths)."""
    cases = document.get("case")
    if not isinstance(cases, list):
        return document
    return {**document, "case": [_resolved_case(case, folder) for case in cases]}


def _resolved_case(case: object, folder: Path) -> object:
    if not isinstance(case, dict):
        return case
    updates: dict[str, object] = {}
    scenario = case.get("scenario")
    if isinstance(scenario, str) and (scenario.endswith(".toml") or (folder / scenario).is_dir()):
        updates["scenario"] = str((folder / scenario).resolve())
    expect = case.get("expect")
    if isinstance(expect, dict) and str(expect.get("researched_in", "")).endswith(".toml"):
        resolved = str((folder / str(expect["researched_in"])).resolve())
        updates["expect"] = {**expect, "researched_in": resolved}
    if isinstance(case.get("chooser"), str):
        updates["chooser"] = _absolute(case["chooser"], folder)
    choosers = case.get("choosers")
    if isinstance(choosers, list):
        updates["choosers"] = [_absolute(c, folder) if isinstance(c, str) else c for c in choosers]
    return {**case, **updates}


def _absolute(spec: str, folder: Path) -> str:
    kind, sep, where = spec.partition(":")
    return f"{kind}:{(folder / where).resolve()}" if sep and kind in ("file", "replay") else spec
