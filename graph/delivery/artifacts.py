"""A published handover revision as immutable artifacts, each named by its sha256.

When a run has ended, its handover is published once as the files people keep: `handover.md`,
`handover.html` (self-contained, an anchor per evidence item), `handover.json` (the document
itself), and a figure (SVG) for each computed result that asked for a plot. They are written to
the run's store in one batch with an index (run, report, revision, owner, each artifact's name,
type, size and sha256) and never written again: a second publication finds the index and keeps it.
A figure that cannot be drawn is listed with its error and no bytes; the text is published anyway.

A run is published by the process that sees it end (`warrant run`, `resume`, `continue`, the
worker), else by the first reader that asks for it (`warrant artifacts`, `export`, `share`, the
web app).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from langgraph.store.base import BaseStore

from contract.errors import ErrorKind, WarrantError
from graph.delivery.figures import FigureError, figure_svg
from graph.delivery.html import ShownFigure, handover_page, shown_figure
from graph.present.render import handover_markdown
from graph.runs.interactions import os_user
from graph.runs.reading import RunResult
from ledger.record import RunRecord

ARTIFACTS = "artifacts"
"""The run's store space of its artifacts: `index`, and each artifact's bytes by `sha256:<hex>`."""
INDEX = "index"
Kind = Literal["markdown", "html", "json", "figure"]
MEDIA_TYPES: dict[str, str] = {
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
    "figure": "image/svg+xml",
}


@dataclass(frozen=True)
class Artifact:
    name: str
    kind: Kind
    sha256: str | None
    """None for a figure that could not be drawn."""
    size: int
    ref: str | None = None
    """The evidence item a figure was computed from."""
    error: str | None = None


@dataclass(frozen=True)
class Published:
    """A revision's index: which run, which report and revision, whose, and its artifacts."""

    thread: str
    report: str
    revision: int
    owner: str
    artifacts: tuple[Artifact, ...]

    def named(self, name: str) -> Artifact | None:
        return next((item for item in self.artifacts if item.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "artifacts": [asdict(item) for item in self.artifacts]}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> Published:
        items = tuple(Artifact(**item) for item in value["artifacts"])
        return cls(value["thread"], value["report"], value["revision"], value["owner"], items)


def published(store: BaseStore, thread: str) -> Published | None:
    found = RunRecord(store, thread).value(ARTIFACTS, INDEX)
    return None if found is None else Published.from_dict(found)


def publish(store: BaseStore, thread: str, handover: Mapping[str, Any], owner: str) -> Published:
    """The run's artifacts: those already published, else these, written in one batch."""
    if (existing := published(store, thread)) is not None:
        return existing
    contents, artifacts = render_artifacts(handover)
    index = Published(
        thread,
        str(handover.get("report") or thread),
        int(handover.get("revision") or 1),
        owner,
        tuple(artifacts),
    )
    record = RunRecord(store, thread)
    puts = [
        record.put_op(ARTIFACTS, f"sha256:{digest}", {"text": text})
        for digest, text in contents.items()
    ]
    record.write([*puts, record.put_op(ARTIFACTS, INDEX, index.to_dict())])
    return index


def deliver(store: BaseStore, result: RunResult, publisher: str | None = None) -> None:
    """Publish an ended run's artifacts (`runner.OnEnd`: once, by whoever sees it end first),
    owned by who started it when served, else by `publisher` (this process's user by default)."""
    owner = result.values.get("started_by") or publisher or os_user()
    publish(store, result.thread, result.values["handover"], owner)


def content(store: BaseStore, thread: str, artifact: Artifact) -> bytes | None:
    """The artifact's bytes as stored, proven by its sha256 (an altered store is a
    `WarrantError` of kind `BROKEN_LEDGER`); None for a figure never drawn or bytes missing."""
    if artifact.sha256 is None:
        return None
    found = RunRecord(store, thread).value(ARTIFACTS, f"sha256:{artifact.sha256}")
    if found is None:
        return None
    data = str(found.get("text", "")).encode()
    if hashlib.sha256(data).hexdigest() != artifact.sha256:
        raise WarrantError(
            ErrorKind.BROKEN_LEDGER,
            f"artifact {artifact.name} of run {thread} is not the one published (its sha256 differs)",
        )
    return data


def render_artifacts(handover: Mapping[str, Any]) -> tuple[dict[str, str], list[Artifact]]:
    """Each artifact's text by its sha256, and the list of them (pure)."""
    figures = _figures(handover)
    shown = [shown_figure(ref, name, svg, error) for ref, name, svg, error in figures]
    texts: list[tuple[str, Kind, str | None, str | None, str | None]] = [
        ("handover.md", "markdown", handover_markdown(handover), None, None),
        ("handover.html", "html", handover_page(handover, shown), None, None),
        ("handover.json", "json", canonical_json(handover), None, None),
        *((name, "figure", svg, ref, error) for ref, name, svg, error in figures),
    ]
    contents: dict[str, str] = {}
    artifacts = []
    for name, kind, text, ref, error in texts:
        digest = None if text is None else hashlib.sha256(text.encode()).hexdigest()
        if text is not None and digest is not None:
            contents[digest] = text
        size = 0 if text is None else len(text.encode())
        artifacts.append(Artifact(name, kind, digest, size, ref, error))
    return contents, artifacts


def canonical_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def _figures(handover: Mapping[str, Any]) -> list[tuple[str, str, str | None, str | None]]:
    """(ref, name, svg or None, error or None) for each computed result with a plot."""
    drawn: list[tuple[str, str, str | None, str | None]] = []
    for item in handover.get("evidence", ()):
        computed = item.get("computed") or {}
        if "plot" not in computed:
            continue
        name = f"figure-{item['ref'].lower()}.svg"
        try:
            drawn.append((item["ref"], name, figure_svg(computed, item["ref"]), None))
        except FigureError as exc:
            drawn.append((item["ref"], name, None, str(exc)))
    return drawn


def shown_figures(store: BaseStore, index: Published) -> list[ShownFigure]:
    """The figures of a published revision, for a page."""
    shown = []
    for item in index.artifacts:
        if item.kind == "figure" and item.ref is not None:
            data = content(store, index.thread, item)
            svg = None if data is None else data.decode()
            shown.append(shown_figure(item.ref, item.name, svg, item.error))
    return shown
