"""The `[[hook]]` and `[[redact]]` tables of a manifest: which hooks a scenario runs, as written.

Loading and running them is `guards/hooks.py`; here only their shape is checked, strictly, at
admission like every other part of a manifest.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from contract.strict import StrictModel

Builtin = Literal["secrets", "emails", "ips", "patterns"]
"""Built-in post-call hooks: masks for secrets, e-mail addresses, IP addresses, and the
manifest's own `[[redact]]` patterns."""


class HookEntry(StrictModel):
    """One `[[hook]]` table: `entry = "module:function"` (trusted code, like a tool) or a
    `builtin`, run `when` a call is about to run, after it ran, or at the run's end."""

    when: Literal["pre_call", "post_call", "end"]
    entry: Annotated[str, StringConstraints(min_length=3, max_length=200)] | None = None
    builtin: Builtin | None = None
    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]{1,40}$")] | None = None
    timeout_s: Annotated[float, Field(gt=0, le=60)] = 5.0

    @model_validator(mode="after")
    def _one_source(self) -> HookEntry:
        if (self.entry is None) == (self.builtin is None):
            raise ValueError("a hook names exactly one of entry or builtin")
        if self.builtin is not None and self.when != "post_call":
            raise ValueError(f"builtin {self.builtin!r} is a post_call hook")
        return self

    @property
    def hook_name(self) -> str:
        """Its owner name in refusals (`hook:<name>`): as given, else the builtin or function."""
        return self.name or self.builtin or (self.entry or "").rpartition(":")[2]


class RedactEntry(StrictModel):
    """One `[[redact]]` table: a pattern (RE2 syntax, linear time) masked as `[redacted:label]`
    by the `patterns` builtin."""

    pattern: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    label: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]{1,32}$")] = "custom"
