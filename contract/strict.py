"""The base models, the one place a model's config is set: every document Warrant checks is
validated strictly, whole, and kept as checked (`StrictModel`); the values it assembles are kept
whole and unchanged too, with lax types (`FrozenModel`). One reader loosens `extra` on its own, and
says why (`nodes/choosers/cassette.py`).

Strict: `True` is not an int, `"5"` is not an int, `5.0` is not an int; a field nobody declared is
refused (`extra="forbid"`); a validated model cannot be changed afterwards (`frozen`). Tool
arguments, manifests, hooks, skills' front matter, action documents and replies derive from it.
`contract/` is the lowest floor, so every layer above may import it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """For what comes from outside (a file, a model's reply, a call): strict, whole, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class FrozenModel(BaseModel):
    """Frozen and whole like `StrictModel`, but lax: a value pydantic can convert (a list for a
    tuple field, say) is converted rather than refused. Records, scenarios, skills, routes and
    excerpts: values Warrant assembles, or reads back from its own state, rather than takes as sent."""

    model_config = ConfigDict(extra="forbid", frozen=True)
