"""A record's file, admitted: its path confined to the manifest's folder before disk is touched,
opened without following a last symlink or waiting on a FIFO, checked (a regular file of its own,
under its kind's cap, a history's header) and hashed once. The registry (`registry.py`) makes a
`Record` of what this finds, at admission and when it finds a record again at read time.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import time
import zlib
from pathlib import Path, PurePosixPath, PureWindowsPath
from stat import S_ISREG
from typing import Literal

from contract.errors import ManifestError
from scenario.delimited import missing_columns
from scenario.digests import identity_of, known, remember
from scenario.files import NON_BLOCKING
from scenario.manifest import RecordEntry
from scenario.repository import pin_head

HISTORY_COLUMNS = ("run", "date", "test", "status")
MAX_RECORD_BYTES: dict[str, int] = {"spec": 32 << 20, "history": 256 << 20, "waveform": 2 << 30}
"""Records read whole per call are capped (a waveform's reader parses the whole file); logs and STA
reports are streamed and may be huge."""
GZIP_MAGIC = b"\x1f\x8b"
PDF_MAGIC = b"%PDF-"
Media = Literal["text", "pdf"]
"""How a record's bytes are read: as lines of text, or (a spec only, told by `PDF_MAGIC` at its
start, never by its name) as a PDF's pages."""


def resolved_path(entry: RecordEntry, root: Path, where: str) -> Path:
    relative = confined_relative_path(entry.path, where)
    try:
        resolved = (root / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        raise ManifestError(f"{where}: file {entry.path!r} does not exist") from None
    if not resolved.is_relative_to(root):
        raise ManifestError(f"{where}: path {entry.path!r} leaves the manifest's folder")
    return resolved


def admitted_identity(
    entry: RecordEntry, path: Path, root: Path, where: str
) -> tuple[os.stat_result, str, Media]:
    """What a record is admitted as: a file's identity, sha256 and media; a repository's folder
    pinned to its HEAD commit instead (`scenario/repository.py`)."""
    if entry.kind == "repository":
        return (*pin_head(path, root, where), "text")
    return fingerprint(entry, path, where)


def fingerprint(entry: RecordEntry, path: Path, where: str) -> tuple[os.stat_result, str, Media]:
    """The admissible file's identity, sha256 and media (a history's header checked too), read
    through one descriptor, so what is hashed is what was checked."""
    media: Media = "text"
    try:
        with _open_admissible(entry, path, where) as handle:
            stat = os.fstat(handle.fileno())
            digest = _digest_once(handle, stat, where)
            if entry.kind == "history":
                handle.seek(0)
                _check_history_header(handle, where)
            if entry.kind == "spec":
                handle.seek(0)
                media = "pdf" if handle.read(len(PDF_MAGIC)) == PDF_MAGIC else "text"
    except OSError as exc:
        raise ManifestError(f"{where}: cannot read {entry.path!r}: {exc.strerror or exc}") from None
    return stat, digest, media


def _digest_once(handle: io.BufferedIOBase, found: os.stat_result, where: str) -> str:
    """The file's sha256: remembered for this identity, or hashed now (and remembered if the file
    held still and had been quiet, `scenario/digests.py`)."""
    before = identity_of(found)
    digest = known(before)
    if digest is not None:
        return digest
    started = time.time_ns()
    digest = hashlib.file_digest(handle, "sha256").hexdigest()
    after = identity_of(os.fstat(handle.fileno()))
    if after != before:
        raise ManifestError(
            f"{where}: the file changed while it was admitted; admit a finished record"
        )
    remember(before, after, digest, started)
    return digest


def _open_admissible(entry: RecordEntry, path: Path, where: str) -> io.BufferedIOBase:
    """The record's file, opened without blocking (a FIFO is refused by `fstat`, never waited on)
    and without following a symlink in its last component, if it may be admitted."""
    fd = os.open(path, NON_BLOCKING | os.O_NOFOLLOW)
    try:
        _check_admissible(entry, os.fstat(fd), where)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _check_admissible(entry: RecordEntry, stat: os.stat_result, where: str) -> None:
    if not S_ISREG(stat.st_mode):
        raise ManifestError(f"{where}: {entry.path!r} is not a regular file")
    if stat.st_nlink != 1:
        raise ManifestError(
            f"{where}: {entry.path!r} has {stat.st_nlink} hard links; a record must be a file of"
            " its own (a hard link can reach outside the manifest's folder, like a symlink)"
        )
    limit = MAX_RECORD_BYTES.get(entry.kind)
    if limit is not None and stat.st_size > limit:
        raise ManifestError(
            f"{where}: {entry.path!r} is larger than {limit >> 20} MiB, the limit for a {entry.kind} record"
        )


def confined_relative_path(raw: str, where: str) -> PurePosixPath:
    """Refuse absolute paths, drive letters, backslashes, NUL bytes and `..` before touching disk."""
    if "\x00" in raw or "\\" in raw or PureWindowsPath(raw).drive:
        raise ManifestError(f"{where}: path {raw!r} is not a plain relative path")
    path = PurePosixPath(raw)
    if path.is_absolute() or raw.startswith("~"):
        raise ManifestError(
            f"{where}: path {raw!r} is absolute; paths are relative to the manifest"
        )
    if ".." in path.parts:
        raise ManifestError(f"{where}: path {raw!r} leaves the manifest's folder")
    return path


def _check_history_header(handle: io.BufferedIOBase, where: str) -> None:
    magic = handle.read(2)
    handle.seek(0)
    stream = gzip.GzipFile(fileobj=handle) if magic == GZIP_MAGIC else handle
    try:
        # `utf-8-sig` drops a leading byte-order mark: Excel writes one in its UTF-8 CSVs.
        header = stream.readline(64 * 1024).decode("utf-8-sig", "replace")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ManifestError(f"{where}: history is not readable gzip: {exc}") from None
    missing = missing_columns(header, HISTORY_COLUMNS)
    if missing:
        raise ManifestError(
            f"{where}: history header (comma, semicolon or tab separated) lacks column(s)"
            f" {', '.join(missing)}"
        )
