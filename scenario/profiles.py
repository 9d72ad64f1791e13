"""Which tools each profile's catalog holds, by name: the one list the catalog (`tools/catalog.py`)
is built from and the skill checks (`scenario/skills.py`) read, with no import of the tools."""

from __future__ import annotations

PROFILE_TOOLS: dict[str, tuple[str, ...]] = {
    "triage": (
        "searchlogs",
        "readlines",
        "logsummary",
        "readspec",
        "getrunhistory",
        "triage",
        "searchfamily",
        "analyze",
        "waveform",
        "readpages",
        "changes",
        "searchdocs",
    ),
    "sta": ("stasummary", "stapaths", "stapath", "stadiff", "analyze"),
}
SHOWN_WITH_RECORDS: frozenset[str] = frozenset({"waveform", "repository"})
"""Record kinds whose tools a chooser is shown only where the manifest approves such a record: a
scenario without one keeps the catalog it had (recorded cassettes pin the tools shown)."""
SHOWN_WITH_PDF_SPEC = frozenset({"readpages", "searchdocs"})
"""Tools a chooser is shown only where the grant holds a spec record that is a PDF (`spec` is an
old kind: by kind alone, every scenario with a Markdown spec would show them, and its recorded
model requests, which pin the tools shown, would change)."""
EVERY_TOOL = frozenset(name for names in PROFILE_TOOLS.values() for name in names)

PROFILE_GOALS: dict[str, str] = {
    "triage": "What failed in this regression, and what does each failure show?",
    "sta": "Where did timing get worse, and what does each worsened path show?",
}
"""The question a scenario of the profile answers when its manifest and the command give none."""

TRIAGE_TOP_BUCKETS = 3
"""Buckets of the whole nightly the triage baseline reads further: the lines around each one's
first example and, with a history, its first test's rows (`nodes/choosers/baseline.py`); a drafted
manifest's evidence budget covers that plan (`scenario/draft.py`)."""
