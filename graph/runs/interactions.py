"""Replies to pending interactions, routed by interaction id (never to "whatever is latest").

LangGraph resumes interrupts by *interrupt* id and silently ignores an id it does not know. Callers
here name the *interaction* (stable across re-asks and restarts); an unknown or already answered
interaction is refused with an error instead of being ignored.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable
from typing import Any

from langgraph.types import Command, StateSnapshot

from contract.codes import InteractionKind
from guards.action import storable_problem, unique_keys


class InteractionError(ValueError):
    """A reply that cannot be delivered: no such pending interaction, or the wrong kind of reply."""


def pending_of(snapshot: StateSnapshot) -> list[tuple[str, dict[str, Any]]]:
    """`(interrupt id, interaction)` for each interaction waiting for a person."""
    return [
        (item.id, item.value)
        for item in snapshot.interrupts
        if isinstance(item.value, dict) and "interaction_id" in item.value
    ]


def expiry_command(snapshot: StateSnapshot, now: float) -> Command[str] | None:
    """The `Command` that lets every pending interaction past its reply time expire (each human
    task records it as expired, whatever the resume value), or None when none is overdue."""
    overdue = {
        interrupt_id: {"interaction_id": interaction["interaction_id"], "expired": True}
        for interrupt_id, interaction in pending_of(snapshot)
        if now > interaction.get("reply_by", now)
    }
    return Command(resume=overdue) if overdue else None


def resume_command(
    snapshot: StateSnapshot, make_reply: Callable[[str], dict[str, Any]], interaction_id: str | None
) -> Command[str]:
    """The `Command` delivering a reply to the named (or the only) pending interaction;
    `make_reply` builds the reply's body for the interaction's kind (`question`, `approval`)."""
    pending = pending_of(snapshot)
    if not pending:
        raise InteractionError("nothing is waiting for a person in this run")
    if interaction_id is None:
        if len(pending) > 1:
            known = ", ".join(interaction["interaction_id"] for _, interaction in pending)
            raise InteractionError(
                f"{len(pending)} interactions are pending ({known}); name one with --interaction"
            )
        interaction_id = pending[0][1]["interaction_id"]
    for interrupt_id, interaction in pending:
        if interaction["interaction_id"] == interaction_id:
            body = make_reply(interaction["kind"])
            return Command(resume={interrupt_id: {"interaction_id": interaction_id, **body}})
    raise InteractionError(
        f"interaction {interaction_id!r} is not pending in this run (unknown or already answered)"
    )


def reply_from_options(
    interaction_kind: str, answer: str | None, approve: bool, reject: bool, edit: str | None
) -> dict[str, Any]:
    """The reply body from the command line's options, checked against the interaction's kind."""
    chosen = [
        name
        for name, given in (
            ("--answer", answer is not None),
            ("--approve", approve),
            ("--reject", reject),
            ("--edit", edit is not None),
        )
        if given
    ]
    if len(chosen) != 1:
        raise InteractionError("give exactly one of --answer, --approve, --reject, --edit")
    if interaction_kind == InteractionKind.QUESTION:
        if answer is None:
            raise InteractionError(
                f"the pending interaction is a question; answer it with --answer, not {chosen[0]}"
            )
        return {"answer": answer}
    if answer is not None:
        raise InteractionError(
            "the pending interaction is an approval; use --approve, --reject or --edit JSON"
        )
    if edit is None:
        return {"decision": "approve" if approve else "reject"}
    try:
        args = json.loads(edit, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError) as exc:
        raise InteractionError(f"--edit is not JSON: {exc}") from None
    if not isinstance(args, dict):
        raise InteractionError("--edit must be a JSON object of arguments")
    if problem := storable_problem(args):
        raise InteractionError(f"--edit is refused: {problem.replace('the document ', '')}")
    return {"decision": "edit", "args": args}


def os_user() -> str:
    """Who runs this command, as the operating system names them; `human` when it cannot say."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "human"
