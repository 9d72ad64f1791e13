"""Cassettes: a run's model attempts written as JSONL, and replayed with no network.

A cassette line is a recorded attempt: the request's clock-free `replay_key` and the reply as it
was recorded. A replay answers an attempt only if its request has the recorded key; otherwise the
run ends at that turn, since the next line answers a different question.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, StringConstraints, ValidationError, model_validator

from contract.strict import StrictModel
from contract.text import describe_validation_error
from guards.action import storable_problem
from nodes.choosers.transport import RECORDED_CHARS, Reply, recorded_text
from scenario.files import open_regular

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class CassetteLine(StrictModel):
    """One cassette line: a recorded model attempt (other recorded fields, such as the turn, are kept
    in the file but not needed to replay it)."""

    model_config = ConfigDict(extra="ignore")
    """Strict and frozen like every model, but a line's other fields (the turn, the request's
    manifest, …) are passed over rather than refused: the writer records more than a replay reads.
    Its own setting, not a base in `contract/strict.py`: no other model reads a document written
    with more than it reads."""

    lane: str = ""
    """The child lane that made the attempt (`t1`, `t1/t2`); empty for the run itself."""
    replay_key: Sha256
    """The recorded request's sha256 with the clock left out (see `nodes.model.prepare`)."""
    locality: Literal["local", "remote"] = "local"
    """The recorded route's: a replay assembles its requests for the same kind of route (a remote
    one is not shown local records), so that they are the ones recorded."""
    reply: Reply

    @model_validator(mode="after")
    def _content_or_error(self) -> CassetteLine:
        if self.reply.content is None and self.reply.error is None:
            raise ValueError("a reply needs content or an error")
        return self


class CassetteError(ValueError):
    """A cassette that cannot be replayed; the message says where and why, in one line."""


def write_cassette(
    path: Path, model_calls: Sequence[dict[str, Any]], lane_calls: Sequence[dict[str, Any]] = ()
) -> None:
    """A replayable record of a run's model attempts, one JSON object per line: the run's own,
    then its children's, each with its `lane` (a child replays the lines of its lane)."""
    path.write_text(
        "".join(
            json.dumps(call, ensure_ascii=False) + "\n" for call in [*model_calls, *lane_calls]
        ),
        encoding="utf-8",
    )


def read_cassette(path: Path, up_to: int | None = None) -> list[CassetteLine]:
    """The recorded attempts, one per non-blank line (the first `up_to` of them), each checked."""
    found: list[CassetteLine] = []
    try:
        with open_regular(path) as raw, io.TextIOWrapper(raw, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    found.append(_recorded(path, number, line))
                    if len(found) == up_to:
                        break
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CassetteError(f"cassette {path} is not UTF-8 (byte {exc.start})") from None
    return found


def _recorded(path: Path, number: int, line: str) -> CassetteLine:
    try:
        recorded = CassetteLine.model_validate_json(line)
    except ValidationError as exc:
        detail = describe_validation_error(exc)
        if '"replay_key"' not in line:
            detail += " (a cassette recorded before replay keys: record it again)"
        raise CassetteError(
            f"cassette {path} line {number} is not a recorded attempt: {detail}"
        ) from None
    if problem := storable_problem(recorded.reply.to_dict()):  # no checkpoint could keep it
        raise CassetteError(
            f"cassette {path} line {number} is refused: {problem.replace('the document ', '')}"
        )
    return recorded


def recorded_locality(path: Path) -> Literal["local", "remote"]:
    """The route locality the cassette was recorded with (its first attempt's)."""
    return read_cassette(path, up_to=1)[0].locality


def replay(
    cassette: Path, attempt: int, turn: int, replay_key: str | None, lane: str = ""
) -> Reply:
    """The `attempt`-th (0-based) recorded response of `lane` (the run's own: empty) in a
    cassette, with no network, provided it answered the same request. A cassette that cannot answer this attempt ends the run: its next
    line answers another attempt of the recorded run, so retrying could only replay a reply to a
    different question."""
    try:
        recorded = [line for line in read_cassette(cassette) if line.lane == lane]
    except CassetteError as exc:
        return Reply(None, error=str(exc), retryable=False)
    if len(recorded) <= attempt:
        where = f" of lane {lane}" if lane else ""
        return Reply(
            None,
            error=f"cassette {cassette} has no response for attempt {attempt + 1}{where}",
            retryable=False,
        )
    call = recorded[attempt]
    if call.replay_key != replay_key:
        return Reply(
            None,
            retryable=False,
            error=(
                f"replay diverged at turn {turn} (attempt {attempt + 1}): the request is not the one "
                f"recorded (key {str(replay_key)[:12]}…, recorded {call.replay_key[:12]}…); the "
                "scenario, goal, evidence or prompt differ: record a new cassette"
            ),
        )
    reply = call.reply
    if reply.content is not None and len(reply.content) > RECORDED_CHARS:  # a hand-made cassette
        return Reply(**{**reply.to_dict(), **recorded_text(reply.content)})
    return reply
