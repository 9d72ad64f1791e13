"""Skills: a team's research methods as versioned Markdown, shown to a model, never consulted by the
guard (seed 001 §08: skills reuse methods, not permissions).

A skill file is TOML front matter between `+++` lines (`version`, `profile`, `title`, optional
`tools`) and a Markdown body. A manifest names skills by id (`skills = ["triage/uvm-regression"]`),
looked up among the `.md` files under the shipped `lab/skills/`, the manifest's own `skills/`
folder and `$WARRANT_SKILLS` — an id is a key of that index, never joined into a path. At load a
skill must be for the scenario's profile, may name only that profile's tools, and may mention only
records the grant approves; otherwise admission is refused with the file and line.
"""

# `StrictModel` (another module) is a pydantic model, as it can for a direct `BaseModel` subclass.

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from contract.errors import ManifestError
from contract.strict import FrozenModel, StrictModel
from contract.text import describe_validation_error

SHIPPED = Path(__file__).resolve().parents[1] / "lab" / "skills"
FOLDER_ENV = "WARRANT_SKILLS"
MAX_SKILL_BYTES = 32 * 1024
MAX_SKILLS = 8
SkillId = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*$", max_length=200),
]
RECORD_LIKE = re.compile(r"(?<![\w:/])[\w.-]+(?:/[\w.-]+)+\.[A-Za-z][\w]*")
"""A path-like mention (`lab/runs/R42/reset_smoke.log`): it must be an approved record."""


class FrontMatter(StrictModel):
    version: Annotated[int, Field(ge=1)]
    profile: str
    title: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    tools: list[str] = []
    """The tools the method uses; each must be in the profile's catalog."""


class Skill(FrozenModel):
    """A skill as admitted: pinned with the grant, so a run shows the model the text it admitted."""

    id: str
    version: int
    title: str
    text: str
    """The Markdown body."""
    sha256: str
    """Of the file's bytes as admitted."""


def skill_index(folders: Iterable[Path]) -> dict[str, Path]:
    """Skill id (the `.md` file's path under its folder, without the suffix) → file; a folder
    listed earlier wins. Links are not followed out of a folder: only regular files inside it."""
    index: dict[str, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        root = folder.resolve()
        for path in sorted(root.rglob("*.md")):
            resolved = path.resolve()
            if resolved.is_file() and resolved.is_relative_to(root):
                index.setdefault(path.relative_to(root).with_suffix("").as_posix(), resolved)
    return index


def skill_folders(manifest: Path) -> list[Path]:
    """Where a manifest's skills are looked up, in order: its own folder's `skills/`, then
    `$WARRANT_SKILLS`, then the shipped ones."""
    configured = os.environ.get(FOLDER_ENV)
    return [
        manifest.resolve().parent / "skills",
        *([Path(configured)] if configured else []),
        SHIPPED,
    ]


def load_skills(
    ids: Collection[str],
    manifest: Path,
    profile: str,
    catalog: Collection[str],
    every_tool: Collection[str],
    records: Collection[str],
) -> tuple[Skill, ...]:
    """The manifest's skills, each checked against the profile's catalog and the grant."""
    if len(ids) > MAX_SKILLS:
        raise ManifestError(f"{manifest}: at most {MAX_SKILLS} skills")
    index = skill_index(skill_folders(manifest))
    skills = []
    for skill_id in ids:
        path = index.get(skill_id)
        if path is None:
            raise ManifestError(
                f"{manifest}: unknown skill {skill_id!r} (known: {', '.join(sorted(index)) or 'none'})"
            )
        skills.append(_checked(skill_id, path, profile, catalog, every_tool, records))
    return tuple(skills)


def _checked(
    skill_id: str,
    path: Path,
    profile: str,
    catalog: Collection[str],
    every_tool: Collection[str],
    records: Collection[str],
) -> Skill:
    raw = path.read_bytes()
    if len(raw) > MAX_SKILL_BYTES:
        raise ManifestError(f"skill {skill_id} ({path}): larger than {MAX_SKILL_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"skill {skill_id} ({path}): not UTF-8 (byte {exc.start})") from None
    front, body, body_line = _split(skill_id, path, text)
    if front.profile != profile:
        raise ManifestError(
            f"skill {skill_id} ({path}): it is for profile {front.profile!r}, the scenario's is {profile!r}"
        )
    if stray := [tool for tool in front.tools if tool not in catalog]:
        raise ManifestError(
            f"skill {skill_id} ({path}): tools {stray} are not in profile {profile}'s catalog"
        )
    for number, line in enumerate(body.splitlines(), start=body_line):
        if problem := _line_problem(line, profile, catalog, every_tool, records):
            raise ManifestError(f"skill {skill_id} ({path}) line {number}: {problem}")
    return Skill(
        id=skill_id,
        version=front.version,
        title=front.title,
        text=body.strip(),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def _split(skill_id: str, path: Path, text: str) -> tuple[FrontMatter, str, int]:
    """The front matter, the body, and the body's first line number."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "+++":
        raise ManifestError(f"skill {skill_id} ({path}) line 1: expected +++ front matter")
    end = next((n for n in range(1, len(lines)) if lines[n].strip() == "+++"), None)
    if end is None:
        raise ManifestError(f"skill {skill_id} ({path}): the front matter has no closing +++")
    try:
        front = FrontMatter.model_validate(tomllib.loads("".join(lines[1:end])))
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"skill {skill_id} ({path}): front matter: {exc}") from None
    except ValidationError as exc:
        raise ManifestError(
            f"skill {skill_id} ({path}): front matter: {describe_validation_error(exc)}"
        ) from None
    return front, "".join(lines[end + 1 :]), end + 2


def _line_problem(
    line: str,
    profile: str,
    catalog: Collection[str],
    every_tool: Collection[str],
    records: Collection[str],
) -> str | None:
    """What a line of a method asks for that the grant does not give: another profile's tool, or
    a record the grant does not approve."""
    for word in re.findall(r"[A-Za-z_]\w*", line):
        if word in every_tool and word not in catalog:
            return f"names tool {word!r}, which profile {profile} does not have"
    for mention in RECORD_LIKE.findall(line):
        if mention not in records:
            return f"asks for record {mention!r}, which the grant does not approve"
    return None
