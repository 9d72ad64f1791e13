"""The manifest document as a user writes it (DESIGN §4): strict models of its tables.

`scenario/registry.py` admits what a manifest names (resolves, confines and fingerprints each record);
these models only say what a manifest may hold, and refuse anything else.
"""

# `StrictModel` (another module) is a pydantic model, as it can for a direct `BaseModel` subclass.

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    model_validator,
)

from contract.strict import StrictModel
from contract.text import USER_NAME
from scenario.hookspec import HookEntry, RedactEntry
from scenario.mcp import McpServer
from scenario.skills import MAX_SKILLS, SkillId

RecordKind = Literal["log", "spec", "history", "sta_report", "waveform", "repository"]
"""`repository`: a git repository's folder, pinned at admission to its HEAD commit
(`scenario/repository.py`); every other kind is a regular file."""
Profile = Literal["triage", "sta"]

ScenarioId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
RecordId = Annotated[str, StringConstraints(min_length=1, max_length=300)]


class RecordEntry(StrictModel):
    """One `[[record]]` table as written by the user."""

    id: RecordId
    kind: RecordKind
    path: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    approval: Literal["none", "human"] = "none"
    """`human`: each use waits for a person's approval."""
    share: Literal["any", "local"] = "any"
    """`local`: the content is never sent to a remote model route."""


class RecordFamily(StrictModel):
    """One `[[record]]` table naming files by a glob (`scenario/families.py`): each file it matches
    is a record whose id is its path relative to the manifest."""

    glob: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    kind: RecordKind
    approval: Literal["none", "human"] = "none"
    share: Literal["any", "local"] = "any"

    def entry(self, relative: str) -> RecordEntry:
        return RecordEntry(
            id=relative, kind=self.kind, path=relative, approval=self.approval, share=self.share
        )


def _record_kind_of(table: Any) -> str:
    """`family` for a table with a glob (as read, or as validated), else `entry`."""
    family = isinstance(table, RecordFamily) or (isinstance(table, dict) and "glob" in table)
    return "family" if family else "entry"


RecordItem = Annotated[
    Annotated[RecordEntry, Tag("entry")] | Annotated[RecordFamily, Tag("family")],
    Discriminator(_record_kind_of),
]
"""A `[[record]]` table: one file (`id` and `path`) or a family of files (`glob`)."""


class Budget(StrictModel):
    """Limits enforced by the guard."""

    steps: Annotated[int, Field(ge=1, le=1000)] = 8
    """Chooser turns; the next choice is refused with `step_budget_exhausted`."""
    evidence: Annotated[int, Field(ge=1, le=1000)] = 6
    """Evidence items the run may collect."""
    deadline_s: Annotated[int, Field(ge=1, le=7 * 24 * 3600)] = 120
    """Seconds from admission after which choices are refused with `deadline_passed`."""
    call_s: Annotated[int, Field(ge=1, le=3600)] = 30
    """Seconds one tool call may read before it is cut (`tool_timeout`); never past the deadline."""
    questions: Annotated[int, Field(ge=0, le=100)] = 3
    """Questions the chooser may ask a person (`ask_user`)."""
    refusals: Annotated[int, Field(ge=1, le=1000)] | None = None
    """Refused choices the run tolerates; the next one ends it with `refusal_limit`.
    Default: the step budget (so by default the step budget ends a run that keeps being refused)."""
    reply_s: Annotated[int, Field(ge=1, le=90 * 24 * 3600)] = 24 * 3600
    """Seconds a person has to answer one interaction; a later reply finds it expired."""
    expires_at: Annotated[AwareDatetime, Field(strict=False)] | None = None
    """A hard end (a TOML date-time with its offset, e.g. `2026-12-04T18:00:00Z`): the work
    deadline, which waiting for people moves on, never moves past it. Kept as text in the grant."""

    @property
    def refusal_limit(self) -> int:
        return self.refusals if self.refusals is not None else self.steps


class Children(StrictModel):
    """The manifest's `[children]` table: how a run may delegate child investigations."""

    max: Annotated[int, Field(ge=1, le=16)] = 4
    """Children one delegation may start."""
    depth: Annotated[int, Field(ge=0, le=3)] = 1
    """How deep delegation may go: 1, main's children may not delegate; 0, nobody may."""
    chooser: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None
    """The children's chooser (`scripted`, `file:PATH`, `model`); by default main's, the scripted
    children's for a `file:` main, and for a `replay:` main its own lanes of the cassette."""
    script: list[dict[str, Any]] = []
    """The scripted children's action documents, each with a `task` naming the task id it is for,
    in turn order."""


Approver = Annotated[str, StringConstraints(pattern=f"^{USER_NAME.pattern}$")]


class Memory(StrictModel):
    """Whose notes a run may recall and propose (`nodes/memory.py`): a project's, and where a
    user is given, that user's own notes in it too (proposed notes go to the project's)."""

    project: Annotated[str, StringConstraints(pattern=f"^{USER_NAME.pattern}$")]
    user: Annotated[str, StringConstraints(pattern=f"^{USER_NAME.pattern}$")] | None = None


class ManifestFile(StrictModel):
    """The manifest document as written by the user."""

    id: ScenarioId
    profile: Profile
    goal: Annotated[str, StringConstraints(max_length=2000)] = ""
    unknowns: list[Annotated[str, StringConstraints(min_length=1, max_length=500)]] = []
    budget: Budget = Budget()
    record: Annotated[list[RecordItem], Field(min_length=1, max_length=10_000)]
    hook: Annotated[list[HookEntry], Field(max_length=20)] = []
    """Hooks that may block a call, narrow what the model sees, or observe the end (`guards/hooks.py`)."""
    redact: Annotated[list[RedactEntry], Field(max_length=50)] = []
    """Patterns the `patterns` builtin hook masks."""
    script: list[dict[str, Any]] = []
    """The scripted baseline: action documents, one per turn, written by the scenario's author."""
    children: Children = Children()
    approvers: Annotated[list[Approver], Field(max_length=100)] = []
    """Who may decide a call that waits for approval; anyone who answers, when empty."""
    skills: Annotated[list[SkillId], Field(max_length=MAX_SKILLS)] = []
    """Methods shown to a model chooser (`scenario/skills.py`); they grant nothing."""
    memory: Memory | None = None
    """The team's notes a chooser may recall (history, never evidence) and propose to."""
    mcp: Annotated[list[McpServer], Field(max_length=20)] = []
    """MCP servers and the tools of theirs a chooser may call, each pinned (`tools/mcp/`)."""

    @model_validator(mode="after")
    def _mcp_servers_named_once(self) -> ManifestFile:
        names = [server.name for server in self.mcp]
        if len(names) != len(set(names)):
            raise ValueError("an [[mcp]] server name appears twice")
        return self
