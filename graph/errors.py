"""What kind of failure stops a run or a command: the library says the kind, never an exit code;
the command line maps each kind to its exit code in one table (`graph.cli.common.EXIT_CODES`)."""

from __future__ import annotations

from enum import StrEnum


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


class KindedError(Exception):
    """A failure that says its kind (`ErrorKind`) and, in its message, one line for people."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
