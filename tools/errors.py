"""The exceptions the tool layer raises, in one place.

`ManifestError` is a user mistake in a scenario manifest (refused at load with a one-line message).
`RecordRefusal` is a tool refusing a call; it carries a stable code so that callers can type it.
"""

from __future__ import annotations

from contract.codes import RefusalCode


class ManifestError(ValueError):
    """A scenario manifest that cannot be admitted; the message names what was wrong."""


class RecordRefusal(Exception):
    """A tool refused a call: `code` is a refusal code, `detail` one line for people."""

    def __init__(self, code: RefusalCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
