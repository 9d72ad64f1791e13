"""The handover as HTML: one self-contained page (no script, no outside address), evidence anchors
(`#e1`, a line `#e1-l12`, a family member's line `#e1-runs-n7-a-log-l846`), citations as links, a person's words and a computed result each marked
as what they are. Everything from a record, a chooser or a person is escaped by the template."""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from graph.present.anchors import citation_anchors, line_anchors, shown_anchors
from graph.present.morning import morning_html
from graph.present.render import heading_record, shown_args
from guards.finalize import ended_as

if TYPE_CHECKING:
    from jinja2 import Environment


@functools.cache
def templates() -> Environment:
    """The pages' templates, loaded at the first page drawn (a command that draws none never
    imports jinja2)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(
        loader=FileSystemLoader(Path(__file__).with_name("templates")),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )


@dataclass(frozen=True)
class ShownFigure:
    """A figure as a page shows it: inline (a `data:` URI), or why it could not be drawn."""

    ref: str
    name: str
    data_uri: str | None = None
    error: str | None = None


def shown_figure(ref: str, name: str, svg: str | None, error: str | None) -> ShownFigure:
    uri = None
    if svg is not None:
        uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    return ShownFigure(ref, name, uri, error)


def _beside(handover: Mapping[str, Any]) -> dict[str, Any]:
    """What the templates show with the handover: what they link with (`graph/present/anchors.py`:
    each cited ref's target, each item's line anchors, one per excerpt line), each item's heading
    as the Markdown writes it (its arguments and what it read), the morning reports, and how the
    run ended as people read it (`guards.finalize.ended_as`)."""
    return {
        "targets": citation_anchors(handover),
        "anchors": {item["ref"]: line_anchors(item) for item in handover.get("evidence") or ()},
        "headings": {
            item["ref"]: {"args": shown_args(item), "record": heading_record(item)}
            for item in handover.get("evidence") or ()
            if item.get("kind") != "human_answer"
        },
        "mornings": mornings(handover),
        "ended": ended_as(handover),
    }


def mornings(handover: Mapping[str, Any]) -> list[tuple[str, Markup]]:
    """Each triage receipt's morning report (`graph/present/morning.py`), as tables whose links
    open the line on this page when the receipt shows it, else the receipt; none for a handover
    without a triage report."""
    shown = []
    for item in handover.get("evidence") or ():
        report = item.get("triage")
        if not isinstance(report, Mapping):
            continue
        spots = shown_anchors(item)

        def link(ref: str, member: str, line: int, spots: Mapping[Any, str] = spots) -> str:
            return spots.get((member, line), ref.lower())

        shown.append((str(item["ref"]), Markup(morning_html(report, ref=item["ref"], links=link))))
    return shown


def handover_body(handover: Mapping[str, Any], figures: Sequence[ShownFigure] = ()) -> Markup:
    """The handover's `<article>`, for a page of the web app."""
    template = templates().get_template("handover_body.html")
    return Markup(template.render(h=handover, figures=figures, **_beside(handover)))


def handover_page(handover: Mapping[str, Any], figures: Sequence[ShownFigure] = ()) -> str:
    """The handover as a self-contained HTML document (the `.html` artifact)."""
    template = templates().get_template("handover_page.html")
    return template.render(h=handover, figures=figures, **_beside(handover))
