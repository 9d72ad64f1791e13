"""An independent reading of a JUnit file for the tests: `xml.etree` over the raw file (only files
known to have no DTD), each testcase's status, and the line of each `<failure`/`<error` tag found
by a regex over the raw lines. It shares nothing with `tools/logs/junit.py`."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

_FAILED_TAG = re.compile(r"<(failure|error)\b")


@dataclass(frozen=True)
class Case:
    name: str
    status: str
    """`fail`, `skipped` or `pass`."""
    line: int | None
    """The line of its `<failure`/`<error` tag (failing cases only)."""


def cases(path: Path) -> list[Case]:
    root = ET.parse(path).getroot()
    lines = [
        number
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for _ in _FAILED_TAG.finditer(text)
    ]
    found, tags = [], iter(lines)
    for case in root.iter("testcase"):
        failed = [child for child in case if child.tag in ("failure", "error")]
        skipped = case.find("skipped") is not None
        status = "fail" if failed else "skipped" if skipped else "pass"
        line = next(tags) if failed else None
        for _ in failed[1:]:
            next(tags)
        found.append(Case(case.get("name", ""), status, line))
    return found
