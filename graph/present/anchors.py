"""Where a citation's link opens, one rule for the Markdown handover, its HTML page, the exported
artifacts and the web app's run page.

An item's anchor is its ref (`e1`); a line's, the ref and its number (`e1-l22`). A family tool's
item quotes lines of several members, and two members may share a number: its line's anchor
names the member too, as a slug of its name unique within the item (`e1-runs-n7-a-log-l846`), so
that a citation naming the member (`E1:runs/N7/a.log:L846`) opens that member's line and never
another's. A slug is only ever an anchor: nothing joins it into a path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from guards.citations import base_ref, first_shown, shown_lines

MAX_SLUG = 60
"""Characters of a member's name kept in its slug (the rest is told apart by a counter)."""


def line_anchors(item: Mapping[str, Any]) -> list[str]:
    """The anchor of each line of the item's excerpt, in its order."""
    ref = str(item["ref"]).lower()
    slugs: dict[str, str] = {}
    anchors = []
    for member, number in shown_lines(item):
        if not member:
            anchors.append(f"{ref}-l{number}")
            continue
        if member not in slugs:
            slugs[member] = _unique(_slug(member), set(slugs.values()))
        anchors.append(f"{ref}-{slugs[member]}-l{number}")
    return anchors


def member_anchor(ref: str, member: str, line: int) -> str:
    """The anchor of a member's line in a family item that shows it alone under its slug (the
    morning report's links, `graph/present/morning.py`); `line_anchors` tells apart two members
    whose names slug alike."""
    return f"{ref.lower()}-{_slug(member)}-l{line}"


def shown_anchors(item: Mapping[str, Any]) -> dict[tuple[str, int], str]:
    """Each (member, line) the item's excerpt shows → its anchor."""
    return dict(zip(shown_lines(item), line_anchors(item), strict=True))


def citation_anchors(handover: Mapping[str, Any]) -> dict[str, str]:
    """Each ref a statement cites → the anchor its link opens: the first line it names that its
    item shows (of the member it names), else its item."""
    items = {str(item["ref"]): item for item in handover.get("evidence") or ()}
    targets: dict[str, str] = {}
    for hypothesis in handover.get("hypotheses") or ():
        for ref in hypothesis.get("refs", ()):
            base = base_ref(ref)
            item = items.get(base)
            spots = shown_lines(item) if item is not None else []
            spot = first_shown(ref, spots)
            targets[ref] = (
                line_anchors(item)[spots.index(spot)]
                if item is not None and spot is not None
                else base.lower()
            )
    return targets


def _slug(member: str) -> str:
    """A member's name as an anchor's part: lower-case letters and digits, words joined by `-`."""
    return re.sub(r"[^a-z0-9]+", "-", member.lower()).strip("-")[:MAX_SLUG].strip("-") or "member"


def _unique(slug: str, used: set[str]) -> str:
    """`slug`, or `slug-2`, `slug-3`, … : the first no other member of the item has."""
    candidate, count = slug, 1
    while candidate in used:
        count += 1
        candidate = f"{slug}-{count}"
    return candidate
