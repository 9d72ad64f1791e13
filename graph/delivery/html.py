"""The handover as HTML: one self-contained page (no script, no outside address), evidence anchors
(`#e1`, a line `#e1-l12`), citations as links, a person's words and a computed result each marked
as what they are. Everything from a record, a chooser or a person is escaped by the template."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from graph.present.render import line_targets
from guards.citations import base_ref

TEMPLATES = Environment(
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


def citation_targets(handover: Mapping[str, Any]) -> dict[str, str]:
    """Each cited ref → the anchor its link opens: the line it names, else its item."""
    resolved = line_targets(handover)
    targets = {}
    for hypothesis in handover.get("hypotheses") or ():
        for ref in hypothesis.get("refs", ()):
            item, line = resolved.get(ref, (base_ref(ref), None))
            targets[ref] = item.lower() + (f"-l{line}" if line is not None else "")
    return targets


def handover_body(handover: Mapping[str, Any], figures: Sequence[ShownFigure] = ()) -> Markup:
    """The handover's `<article>`, for a page of the web app."""
    template = TEMPLATES.get_template("handover_body.html")
    return Markup(template.render(h=handover, figures=figures, targets=citation_targets(handover)))


def handover_page(handover: Mapping[str, Any], figures: Sequence[ShownFigure] = ()) -> str:
    """The handover as a self-contained HTML document (the `.html` artifact)."""
    template = TEMPLATES.get_template("handover_page.html")
    return template.render(h=handover, figures=figures, targets=citation_targets(handover))
