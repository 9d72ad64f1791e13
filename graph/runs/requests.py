"""What a run is asked to do: a request admitted before anything starts (the grant pinned, the
thread named by a message id), or one continuing a finished run."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import Any

from contract.errors import ErrorKind
from contract.state import RunInput
from graph.build import store_of
from graph.runs.identity import thread_for_message
from graph.runs.reading import RunError, config_of, has_run_values, reading_graph
from guards.schedule import ScheduleLink
from lab import builtin_manifests
from ledger.persistence.locations import shown_db
from nodes.admit import admission, request_digest
from nodes.choosers.route import Route
from nodes.choosers.transport import probe
from nodes.continuation import NotContinuable, carried


@dataclass(frozen=True)
class RunRequest:
    reference: str
    """A built-in id, or the manifest's absolute path."""
    goal: str
    chooser: str
    thread_id: str
    message_id: str | None
    parent: str | None = None
    """The finished run this one continues (`warrant continue`)."""
    schedule: ScheduleLink | None = None
    """The confirmed schedule this run is an occurrence of (`graph.runs.schedules`)."""

    @property
    def digest(self) -> str:
        return request_digest(self.reference, self.goal, self.chooser, self.parent)

    def as_input(self) -> RunInput:
        run_input: RunInput = {
            "scenario": self.reference,
            "goal": self.goal,
            "chooser": self.chooser,
        }
        if self.parent:
            run_input["parent"] = self.parent
        if self.message_id:
            run_input["message_id"] = self.message_id
        if self.schedule:
            run_input["schedule"] = dict(self.schedule)
        return run_input


def admit_request(
    scenario: str, goal: str | None, chooser: str, thread: str | None, message_id: str | None
) -> RunRequest:
    """Check a run request before anything starts; bad input is a `RunError` (`ErrorKind.BAD_INPUT`)."""
    return pinned_request(scenario, goal, chooser, thread, message_id)[0]


def pinned_request(
    scenario: str, goal: str | None, chooser: str, thread: str | None, message_id: str | None
) -> tuple[RunRequest, dict[str, Any]]:
    """`admit_request`, with what admission pinned (the grant with its manifest's sha256)."""
    if thread and message_id:
        raise RunError(
            ErrorKind.BAD_INPUT,
            "give --thread or --message-id, not both: the message id names the thread",
        )
    try:
        pinned = admission(scenario, goal, chooser)
    except ValueError as exc:
        raise RunError(ErrorKind.BAD_INPUT, str(exc)) from None
    if pinned["chooser"] == "model" and (
        unreachable := probe(Route.model_validate(pinned["route"]))
    ):
        raise RunError(ErrorKind.UNREACHABLE, unreachable)
    grant = pinned["grant"]
    builtin = grant["id"] in builtin_manifests() and scenario == grant["id"]
    thread_id = thread or (
        thread_for_message(message_id) if message_id else f"{grant['id']}-{secrets.token_hex(4)}"
    )
    request = RunRequest(
        grant["id"] if builtin else grant["manifest"],
        pinned["goal"],
        pinned["chooser"],
        thread_id,
        message_id,
    )
    return request, pinned


def continuation(
    parent: str,
    db: str,
    goal: str | None,
    chooser: str | None,
    thread: str | None,
    message_id: str | None,
) -> RunRequest:
    """The request continuing the finished run `parent`: its scenario, the goal and chooser given
    or its own, a fresh budget; a parent that is not a finished run is a `RunError`."""
    with reading_graph(db) as graph:
        values = graph.get_state(config_of(parent)).values
        if not has_run_values(values):
            raise RunError(
                ErrorKind.NOT_FOUND, f"no run with thread id {parent!r} in {shown_db(db)}"
            )
        try:
            carried(store_of(graph), parent, values["grant"]["manifest_sha256"])
        except NotContinuable as exc:
            raise RunError(
                ErrorKind.CONFLICT, f"{exc}; resume it instead (`warrant resume {parent}`)"
            ) from None
    request = admit_request(
        values["scenario"], goal or values["goal"], chooser or values["chooser"], thread, message_id
    )
    return replace(request, parent=parent)
