"""The failures Warrant names, in one place below every layer.

`ErrorKind` says what kind of failure stops a run or a command: the library says the kind, never
an exit code; the command line maps each kind to its exit code in one table
(`graph.cli.common.EXIT_CODES`). `WarrantError` is the base that carries it.
`ManifestError` is a user mistake in a scenario manifest (refused at load with a one-line message).
`RecordRefusal` is a tool refusing a call; it carries a stable code so that callers can type it.
"""

from __future__ import annotations

from enum import StrEnum

from contract.codes import RefusalCode


class ErrorKind(StrEnum):
    BAD_INPUT = "bad_input"
    """A request, an option or a setting that cannot be used: nothing started."""
    NOT_FOUND = "not_found"
    """No run on that thread, no such revision, no handover yet."""
    CONFLICT = "conflict"
    """The request disagrees with what the store holds: the thread already has a run, a message id
    used for another request, a run advanced by another worker meanwhile, an unfinished run to
    continue."""
    BUSY = "busy"
    """Another worker holds the thread's lease now."""
    REPLY_REFUSED = "reply_refused"
    """A person's reply that fits nothing waiting: a wrong interaction, a malformed reply, a run
    that has ended."""
    UNREACHABLE = "unreachable"
    """Storage, the chooser, a port or an endpoint that cannot be used now: the run can be
    resumed."""
    BROKEN_LEDGER = "broken_ledger"
    """A ledger whose chain or seals do not hold (`warrant events --verify`)."""


class WarrantError(Exception):
    """A failure that says its kind (`ErrorKind`) and, in its message, one line for people."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ManifestError(WarrantError, ValueError):
    """A scenario manifest that cannot be admitted; the message names what was wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorKind.BAD_INPUT, message)


class RecordRefusal(Exception):
    """A tool refused a call: `code` is a refusal code, `detail` one line for people."""

    def __init__(self, code: RefusalCode, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
