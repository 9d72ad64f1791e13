"""`recall(query)`: the control tool over memory, checked like any call but never a read of a record.

A recall searches the team's notes (`nodes.memory`), not the grant: what it returns is history,
numbered `M1, M2 …`, never evidence, and it costs no evidence budget. It goes in a batch of its
own, so a batch is either reads of records or a look into memory, and the guard decides each kind
by its own rules.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, StringConstraints, ValidationError

from contract.codes import Outcome
from contract.strict import StrictModel
from contract.text import describe_validation_error
from guards.refusals import Refusal, RefusalCode, tool_owner

RECALL = Outcome.RECALL.value
"""The control tool's name: a batch of it is decided as the `recall` outcome."""
DESCRIPTION = (
    "Control tool, not a read: the notes your team saved from earlier investigations whose text or"
    " signature holds every word of `query` (case-insensitive), newest first. They come back as"
    " M… refs: history, never evidence; propose recall in a batch of its own."
)
NO_MEMORY = "this run has no memory: the manifest names no memory project"


class RecallArgs(StrictModel):
    query: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"\w")]
    limit: Annotated[int, Field(ge=1, le=10)] = 5


def catalog_entry() -> dict[str, Any]:
    """The chooser's catalog entry for recall, beside the profile's tools."""
    return {"name": RECALL, "description": DESCRIPTION, "args": RecallArgs.model_json_schema()}


def query_key(query: str) -> str:
    """A query as compared for repetition: its words, lower case, in order."""
    return " ".join(word.lower() for word in re.findall(r"\w+", query))


def recall_args(call: Any) -> RecallArgs | Refusal:
    """A recall call's arguments, validated strictly, or the refusal (owner `tool:recall`)."""
    try:
        return RecallArgs.model_validate(call.args)
    except ValidationError as exc:
        detail = describe_validation_error(exc)
        return Refusal(RefusalCode.INVALID_ARGUMENT, tool_owner(RECALL), detail, call.model_dump())
