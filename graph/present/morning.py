"""Placeholder renderers of the morning report (the render helper's module replaces this one):
the report's dict as text, Markdown and HTML, just enough for `warrant triage` to print."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any


def morning_text(report: Mapping[str, Any], width: int = 100) -> str:
    """The summary line, then the rest as JSON (placeholder)."""
    return json.dumps(dict(report), indent=1, ensure_ascii=False)[: max(width, 1) * 1000] + "\n"


def morning_markdown(report: Mapping[str, Any]) -> str:
    return "```json\n" + json.dumps(dict(report), indent=1, ensure_ascii=False) + "\n```\n"


def morning_html(report: Mapping[str, Any]) -> str:
    return "<pre>" + html.escape(json.dumps(dict(report), ensure_ascii=False)) + "</pre>"
