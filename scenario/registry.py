"""Scenario manifests and the approved-record registry.

A manifest (DESIGN §4) lists the records a scenario may read. Paths are resolved once, at load,
relative to the manifest and confined to its folder; afterwards a record is found only by its exact
id (a dictionary lookup), so no path is ever built from chooser input. What a manifest may hold is
`scenario/manifest.py`; admitting what it names is here (a record's file: `recordfile.py`).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import Field, ValidationError

from contract.codes import RefusalCode
from contract.errors import ManifestError, RecordRefusal
from contract.strict import FrozenModel
from contract.text import describe_validation_error
from scenario.families import expand, glob_problem, matches
from scenario.files import open_regular
from scenario.hookspec import HookEntry, RedactEntry
from scenario.manifest import (
    Budget,
    Children,
    ManifestFile,
    Memory,
    Profile,
    RecordEntry,
    RecordFamily,
    RecordKind,
)
from scenario.mcp import AdmittedMcpTool, McpServer
from scenario.profiles import EVERY_TOOL, PROFILE_TOOLS
from scenario.recordfile import Media, admitted_identity, confined_relative_path, resolved_path
from scenario.skills import Skill, load_skills

MAX_MANIFEST_BYTES = 1 << 20
MAX_RECORDS = 10_000
"""Records one manifest may approve, its families' files counted one by one."""


class Record(FrozenModel):
    """An approved record, resolved and fingerprinted at admission."""

    id: str
    kind: RecordKind
    path: str
    """Absolute, symlink-free path inside `root`."""
    root: str
    """The manifest's folder, which the record may not leave."""
    approval: Literal["none", "human"]
    share: Literal["any", "local"]
    sha256: str
    """The file's sha256; of a `repository`, the HEAD commit id it was pinned to."""
    size: int
    mtime_ns: int
    inode: int = 0
    """With size and mtime, the file's identity pinned at admission (0: admitted before inodes
    were pinned, and not compared)."""
    media: Media = Field("text", exclude_if=lambda media: media == "text")
    """`pdf` for a spec that is a PDF (`readpages` reads it, `readspec` refuses it). Left out of
    a dump when `text`: grants and checkpoints of text records keep their bytes."""


class Scenario(FrozenModel):
    """A loaded scenario: the grant a run is admitted under."""

    id: str
    profile: Profile
    goal: str
    unknowns: tuple[str, ...]
    budget: Budget
    records: dict[str, Record]
    script: tuple[dict[str, Any], ...]
    manifest: str
    hooks: tuple[HookEntry, ...] = ()
    redact: tuple[RedactEntry, ...] = ()
    children: Children = Children()
    approvers: tuple[str, ...] = ()
    skills: tuple[Skill, ...] = ()
    memory: Memory | None = None
    manifest_sha256: str = ""
    """The sha256 of the manifest's bytes as admitted: records are resolved again from exactly
    this manifest when they are read (`pinned_record`)."""
    families: dict[str, tuple[str, ...]] = {}
    """Each `glob` the manifest approves → the ids of the records it matched, in order: what a
    family tool's `family` argument names."""
    mcp: tuple[McpServer, ...] = ()
    """The manifest's MCP servers, as written; what they offer is checked at admission."""
    mcp_tools: dict[str, AdmittedMcpTool] = {}
    """`server.tool` → the MCP tool as admitted (pin checked against its server; `nodes/admit.py`):
    empty until admission."""

    def lookup(
        self, record_id: object, kind: RecordKind | tuple[RecordKind, ...], tool: str
    ) -> Record:
        """The approved record with exactly this id and kind (or one of these kinds), or a
        `RecordRefusal`."""
        record = self.records.get(record_id) if isinstance(record_id, str) else None
        if record is None:
            raise RecordRefusal(
                RefusalCode.UNAPPROVED_RECORD,
                f"{_clip(record_id)} is not an approved record of scenario {self.id}",
            )
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if record.kind not in kinds:
            raise RecordRefusal(
                RefusalCode.INVALID_ARGUMENT,
                f"{_clip(record_id)} is a {record.kind} record; {tool} reads {' or '.join(kinds)}",
            )
        return record

    def family(self, named: object, kind: RecordKind, tool: str) -> Family:
        """The approved records a family tool's `family` argument names: a manifest's `glob`,
        exactly as written, or a list of record ids; else a `RecordRefusal`."""
        if isinstance(named, str):
            ids = self.families.get(named)
            if ids is None:
                known = ", ".join(repr(glob) for glob in self.families) or "none"
                raise RecordRefusal(
                    RefusalCode.UNAPPROVED_RECORD,
                    f"{_clip(named)} is not a record family of scenario {self.id}"
                    f" (its families: {_clip(known, 200)})",
                )
            members = tuple(self.records[record_id] for record_id in ids)
            if members[0].kind != kind:
                raise RecordRefusal(
                    RefusalCode.INVALID_ARGUMENT,
                    f"family {_clip(named)} holds {members[0].kind} records; {tool} reads {kind}",
                )
            return Family(named, members, glob=named)
        listed: list[object] = list(named) if isinstance(named, (list, tuple)) else []
        if len(set(map(repr, listed))) != len(listed):
            raise RecordRefusal(RefusalCode.INVALID_ARGUMENT, "a record id is listed twice")
        members = tuple(self.lookup(record_id, kind, tool) for record_id in listed)
        return Family(f"{len(members)} listed record(s)", members)


@dataclass(frozen=True)
class Family:
    """Records read together by one family tool call: a manifest's family or a listed few."""

    name: str
    """The glob, or `N listed record(s)`: what the call's receipt names as its record."""
    members: tuple[Record, ...]
    glob: str | None = None
    """The manifest's glob (None for a list of ids)."""

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(member.id for member in self.members)

    @functools.cached_property
    def sha256(self) -> str:
        """One digest for the family as admitted: of each member's id and sha256, in order."""
        lines = "".join(f"{member.id}\t{member.sha256}\n" for member in self.members)
        return hashlib.sha256(lines.encode()).hexdigest()

    @property
    def share(self) -> Literal["any", "local"]:
        """`local` when any member is: the family's reading carries every member's content."""
        return "any" if all(member.share == "any" for member in self.members) else "local"


def load_scenario(manifest_path: Path) -> Scenario:
    """Load and admit a manifest, or raise `ManifestError` naming what was wrong."""
    raw = _manifest_bytes(manifest_path)
    document = _parse_or_refuse(manifest_path, raw)
    root = manifest_path.resolve().parent
    records: dict[str, Record] = {}
    families: dict[str, tuple[str, ...]] = {}
    for glob, entries in _entries(document, root, manifest_path):
        for entry in entries:
            if entry.id in records:
                raise ManifestError(f"{manifest_path}: record id {entry.id!r} appears twice")
            records[entry.id] = _admit_record(entry, root, manifest_path)
        if glob is not None:
            if glob in families:
                raise ManifestError(f"{manifest_path}: glob {glob!r} appears twice")
            families[glob] = tuple(entry.id for entry in entries)
    return Scenario(
        id=document.id,
        profile=document.profile,
        goal=document.goal,
        unknowns=tuple(document.unknowns),
        budget=document.budget,
        records=records,
        script=tuple(copy.deepcopy(document.script)),  # the cached document stays untouched
        hooks=tuple(document.hook),
        redact=tuple(document.redact),
        children=document.children,
        approvers=tuple(document.approvers),
        skills=_skills(document, manifest_path, records),
        memory=document.memory,
        manifest=str(manifest_path.resolve()),
        manifest_sha256=hashlib.sha256(raw).hexdigest(),
        families=families,
        mcp=tuple(document.mcp),
    )


def _skills(
    document: ManifestFile, manifest: Path, records: dict[str, Record]
) -> tuple[Skill, ...]:
    """The manifest's skills, checked against its profile's catalog and its records."""
    if not document.skills:
        return ()
    catalog = PROFILE_TOOLS.get(document.profile, ())
    return load_skills(document.skills, manifest, document.profile, catalog, EVERY_TOOL, records)


def _entries(
    document: ManifestFile, root: Path, manifest: Path
) -> Iterator[tuple[str | None, list[RecordEntry]]]:
    """Every `[[record]]` table's entries with its glob (None for one file), each family's files
    in order; at most `MAX_RECORDS` in all."""
    count = 0
    for item in document.record:
        if isinstance(item, RecordFamily):
            if problem := glob_problem(item.glob):
                raise ManifestError(f"{manifest}: {problem}")
            entries = [item.entry(relative) for relative in expand(root, item.glob)]
            if not entries:
                raise ManifestError(f"{manifest}: glob {item.glob!r} matches no file")
            glob: str | None = item.glob
        else:
            entries, glob = [item], None
        count += len(entries)
        if count > MAX_RECORDS:
            raise ManifestError(f"{manifest}: more than {MAX_RECORDS} records")
        yield glob, entries


def _entries_named(document: ManifestFile, record_id: str) -> list[RecordEntry]:
    """The entries that name `record_id`: itself, or a family whose pattern matches it."""
    return [
        item.entry(record_id) if isinstance(item, RecordFamily) else item
        for item in document.record
        if (
            item.id == record_id if isinstance(item, RecordEntry) else matches(item.glob, record_id)
        )
    ]


def manifest_document(path: Path) -> ManifestFile:
    """The manifest as written, checked, without admitting anything it names (no record is
    opened); a `ManifestError` otherwise."""
    return _parse_or_refuse(path, _manifest_bytes(path))


def _manifest_bytes(path: Path) -> bytes:
    try:
        with open_regular(path) as handle:
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path}: manifest is larger than {MAX_MANIFEST_BYTES} bytes")
    return raw


def _parse_or_refuse(path: Path, raw: bytes) -> ManifestFile:
    try:
        document = _parse_manifest(raw)
    except UnicodeDecodeError:
        raise ManifestError(f"{path}: manifest is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: invalid TOML: {exc}") from None
    except ValidationError as exc:
        raise ManifestError(f"{path}: {describe_validation_error(exc)}") from None
    if "\\u0000" in document.model_dump_json():
        raise ManifestError(
            f"{path}: the manifest contains a NUL character (\\u0000), which no store keeps"
        )
    return document


@functools.lru_cache(maxsize=64)
def _parse_manifest(raw: bytes) -> ManifestFile:
    """The document in these bytes. Keyed by the bytes themselves, so a cached document is the
    file as just read; parsing TOML is most of an admission's cost, and runs re-admit the same
    manifest. The document is frozen; errors are not cached."""
    return ManifestFile.model_validate(tomllib.loads(raw.decode("utf-8")))


def pinned_record(manifest: str, manifest_sha256: str, admitted: Record) -> Record:
    """The admitted record, its file found again through the manifest it was admitted from, whose
    bytes must still have the pinned sha256: a path is never taken from the run's state."""
    path = Path(manifest)
    return _pinned(path, _admitted_manifest(path, manifest_sha256), admitted)


def pinned_members(manifest: str, manifest_sha256: str, admitted: Sequence[Record]) -> list[Record]:
    """A family's members found again as `pinned_record` finds one (the manifest read once). A
    member that no longer resolves keeps no path (`""`): its read fails as that member's unknown,
    and the rest of the family is read."""
    path = Path(manifest)
    document = _admitted_manifest(path, manifest_sha256)
    folders: dict[PurePosixPath, Path | None] = {}
    members = []
    for record in admitted:
        found = _member_path(path.parent, document, record.id, folders)
        members.append(
            record.model_copy(
                update={"path": str(found) if found else "", "root": str(path.parent)}
            )
        )
    return members


def _member_path(
    root: Path, document: ManifestFile, record_id: str, folders: dict[PurePosixPath, Path | None]
) -> Path | None:
    """A member's file as its manifest entry names it: its folder resolved once per folder (inside
    the manifest's), its own name joined, never resolved: the reader opens it without following a
    last symlink. None when the entry or its folder is gone."""
    try:
        [entry] = _entries_named(document, record_id)
        relative = confined_relative_path(entry.path, f"record {record_id!r}")
    except (ManifestError, ValueError):
        return None
    if relative.parent not in folders:
        try:
            folder = (root / relative.parent).resolve(strict=True)
        except (OSError, RuntimeError):
            folder = None
        folders[relative.parent] = folder if folder and folder.is_relative_to(root) else None
    folder = folders[relative.parent]
    return folder / relative.name if folder is not None else None


def _admitted_manifest(path: Path, manifest_sha256: str) -> ManifestFile:
    """The manifest a run was admitted from, parsed, if its bytes are still those admitted."""
    try:
        raw = _manifest_bytes(path)
    except ManifestError as exc:
        raise RecordRefusal(RefusalCode.RECORD_UNAVAILABLE, str(exc)) from None
    if hashlib.sha256(raw).hexdigest() != manifest_sha256:
        raise RecordRefusal(
            RefusalCode.RECORD_CHANGED,
            f"the manifest {path.name} changed after the run was admitted",
        )
    try:
        return _parse_or_refuse(path, raw)
    except ManifestError as exc:
        raise RecordRefusal(RefusalCode.RECORD_UNAVAILABLE, str(exc)) from None


def _pinned(path: Path, document: ManifestFile, admitted: Record) -> Record:
    try:
        [entry] = _entries_named(document, admitted.id)
        resolved = resolved_path(entry, path.parent, f"{path}: record {entry.id!r}")
    except (ManifestError, ValueError):
        raise RecordRefusal(
            RefusalCode.RECORD_UNAVAILABLE, f"{admitted.id} is not in the admitted manifest"
        ) from None
    return admitted.model_copy(
        update={"path": str(resolved), "root": str(path.parent), "kind": entry.kind}
    )


def admit_entry(manifest: Path, entry: RecordEntry) -> Record:
    """One record of a manifest admitted alone (confined to its folder, hashed): what a reader of
    reference material opens, and nothing else of the manifest."""
    return _admit_record(entry, manifest.resolve().parent, manifest)


def _admit_record(entry: RecordEntry, root: Path, manifest: Path) -> Record:
    where = f"{manifest}: record {entry.id!r}"
    resolved = resolved_path(entry, root, where)
    stat, digest, media = admitted_identity(entry, resolved, root, where)
    return Record(
        id=entry.id,
        kind=entry.kind,
        path=str(resolved),
        root=str(root),
        approval=entry.approval,
        share=entry.share,
        sha256=digest,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        inode=stat.st_ino,
        media=media,
    )


def _clip(value: object, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"
