"""The strict base model: every document Warrant checks is validated strictly, whole, and kept as
checked.

Strict: `True` is not an int, `"5"` is not an int, `5.0` is not an int; a field nobody declared is
refused (`extra="forbid"`); a validated model cannot be changed afterwards (`frozen`). Tool
arguments, manifests, hooks, skills' front matter, action documents and replies derive from it.
`tools/` is the lowest layer, so `guards/`, `nodes/` and `graph/` may all import it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
