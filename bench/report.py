"""Ratios a bench measured against its same-run peers, written where `bench/ratios.py` reads them."""

from __future__ import annotations

import json
from pathlib import Path


def write_ratios(path: Path | None, ratios: dict[str, float]) -> None:
    """`{"ratios": {name: Warrant / peer}}` to `path` (a bench's `--json`), if one is given."""
    if path is not None:
        path.write_text(json.dumps({"ratios": ratios}, indent=2) + "\n")
