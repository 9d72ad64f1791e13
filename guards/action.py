"""The action document every chooser returns (DESIGN §5), and its strict parser.

Step one of two-step validation: is this an action document at all? Anything else (not JSON, both
or neither of `tool_calls`/`message`, too many calls, unknown fields) is `malformed_action`.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from contract.codes import Owner
from contract.strict import StrictModel
from contract.text import describe_validation_error, one_line
from guards.refusals import Refusal, RefusalCode
from tools.storable import unkept
from tools.wave.args import INSTANT

MAX_DOCUMENT_CHARS = 64 * 1024
MAX_CALLS_PER_TURN = 4
MAX_STATEMENTS = 10
"""Statements (hypotheses) one stop message may hold."""
MAX_DEPTH = 16
"""Nesting of objects and arrays; an action document needs 5, and deeper data is refused before
any code walks it recursively."""
MAX_VALUES = 4096
"""Strings, numbers and containers in one document (64 KiB of JSON holds fewer of any use)."""

REF_LIKE = re.compile(r"^[EHMehm][0-9]+$")


def _not_ref_like(call_id: str) -> str:
    if REF_LIKE.match(call_id):
        raise ValueError(f"a call id must not look like an evidence ref ({call_id!r})")
    return call_id


CallId = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,64}$"),
    AfterValidator(_not_ref_like),
]
EvidenceRef = Annotated[str, StringConstraints(pattern=r"^[EHM][1-9][0-9]{0,3}$")]
"""`E…` an observation, `H…` a person's answer, `M…` a recalled note (history, never evidence)."""


CITATION = re.compile(
    r"(?P<ref>[EHM][1-9][0-9]{0,3})"
    r"(?::(?P<commit>[0-9a-f]{7,40})"
    rf"|:t=(?P<time>{INSTANT})"
    r"|:(?:(?:(?P<member>[\w.+,@%~=/-]{1,300}?):)?L(?P<first>[1-9][0-9]{0,8})(?:-L?(?P<last>[1-9][0-9]{0,8}))?"
    r"|(?P<page>p[1-9][0-9]{0,5})))?"
)
"""A citation: a ref (`E1`), a line or lines of what it shows (`E1:L23`, `E1:L20-L25`), a line
of one member of a family it read (`E1:runs/N7/a.log:L846`: a family's excerpt quotes lines of
several members, and two may share a number); of a PDF's pages (`readpages`), a page (`E2:p14`)
or a line of one (`E2:p14:L3`: the page is the member its lines are quoted from); or a commit a
`changes` item lists (`E5:c1a2b3c4`, 7 to 40 hex digits); or a time a `waveform` item shows
(`E4:t=265ns`, a number and its unit)."""
_LINES = re.compile(r"L[1-9][0-9]{0,8}(?:-L?[1-9][0-9]{0,8})?")


def is_citation(ref: str) -> bool:
    """Whether `ref` is a citation: a recalled note (`M…`) is cited whole, and a member is never
    a line marker (`E1:L2:L3` is malformed, not line 3 of a member `L2`)."""
    found = CITATION.fullmatch(ref)
    return not (
        found is None
        or (
            found["ref"][0] == "M"
            and (found["first"] or found["page"] or found["commit"] or found["time"]) is not None
        )
        or (found["member"] is not None and _LINES.fullmatch(found["member"]))
    )


def _citation(ref: str) -> str:
    if not is_citation(ref):
        raise ValueError(
            f"{ref[:80]!r} is not a citation (E1, E1:L23, E1:L20-L25, E1:member:L23, E1:p14, E1:t=265ns, M1)"
        )
    return ref


CitationRef = Annotated[
    str,
    StringConstraints(max_length=340),
    AfterValidator(_citation),
    WithJsonSchema({"type": "string", "pattern": r"^[EHM][1-9][0-9]{0,3}$"}),
]
"""A ref, or a line or lines of what an `E…`/`H…` item shows: `E1:L23`, `E1:L20-L25`, and of a
family's item `E1:runs/N7/a.log:L846`. The schema a model is shown still names whole refs: the
request a model is sent stays the one its recorded cassettes hold (a person, a script or a file
may cite lines; a model that does is accepted)."""


class ToolCall(StrictModel):
    id: CallId
    name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    args: dict[str, Any] = {}


class Hypothesis(StrictModel):
    """A chooser's statement, which must cite existing evidence; never a verified finding."""

    statement: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    refs: Annotated[list[CitationRef], Field(min_length=1, max_length=20)]


class StopMessage(StrictModel):
    kind: Literal["stop"]
    text: Annotated[str, StringConstraints(max_length=2000)] = ""
    hypotheses: Annotated[list[Hypothesis], Field(max_length=MAX_STATEMENTS)] = []


class AskUserMessage(StrictModel):
    kind: Literal["ask_user"]
    question: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    blocking: bool = True
    """False: the run goes on, and adopts the answer at its next turn after it arrives."""


MAX_TASKS = 16
"""Tasks one delegate message may hold (the manifest's `children.max` may allow fewer)."""


class TaskBudget(StrictModel):
    """What a child may spend, carved out of what the run has left (never added to it)."""

    steps: Annotated[int, Field(ge=1, le=1000)]
    evidence: Annotated[int, Field(ge=1, le=1000)]
    questions: Annotated[int, Field(ge=0, le=100)] = 0


class DelegateTask(StrictModel):
    """One child investigation: a bounded goal over a subset of the run's records."""

    id: CallId
    goal: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    records: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=300)]],
        Field(min_length=1, max_length=100),
    ]
    budget: TaskBudget

    @model_validator(mode="after")
    def _records_once(self) -> DelegateTask:
        if len(set(self.records)) != len(self.records):
            raise ValueError(f"task {self.id!r} names a record twice")
        return self


class DelegateMessage(StrictModel):
    kind: Literal["delegate"]
    tasks: Annotated[list[DelegateTask], Field(min_length=1, max_length=MAX_TASKS)]

    @model_validator(mode="after")
    def _ids_once(self) -> DelegateMessage:
        ids = [task.id for task in self.tasks]
        if len(set(ids)) != len(ids):
            raise ValueError("two tasks have the same id")
        return self


class RememberMessage(StrictModel):
    """A note proposed for the team's memory: saved only once a person approves (or edits) it."""

    kind: Literal["remember"]
    text: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    signature: Annotated[str, StringConstraints(max_length=200)] = ""
    """A short failure signature to find the note by (`RST_CHK clk_en late`)."""
    refs: Annotated[list[EvidenceRef], Field(max_length=20)] = []
    """What the note rests on, shown to the person who decides."""


Message = Annotated[
    StopMessage | AskUserMessage | DelegateMessage | RememberMessage, Field(discriminator="kind")
]


class ActionDocument(StrictModel):
    summary: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    tool_calls: (
        Annotated[list[ToolCall], Field(min_length=1, max_length=MAX_CALLS_PER_TURN)] | None
    ) = None
    message: Message | None = None

    @model_validator(mode="after")
    def _exactly_one_outcome(self) -> ActionDocument:
        if (self.tool_calls is None) == (self.message is None):
            raise ValueError("exactly one of tool_calls or message is required")
        return self


def parse_action(raw: object) -> ActionDocument | Refusal:
    """Parse a proposal (JSON text or an already-decoded object) into an action document."""
    if isinstance(raw, str):
        if len(raw) > MAX_DOCUMENT_CHARS:
            return _malformed(f"the document is longer than {MAX_DOCUMENT_CHARS} characters")
        try:
            raw = json.loads(raw, object_pairs_hook=unique_keys)
        except (ValueError, RecursionError) as exc:
            return _malformed(f"not JSON: {one_line(str(exc), 120)}")
    if not isinstance(raw, dict):
        return _malformed(f"expected a JSON object, got {type(raw).__name__}")
    problem = shape_problem(raw)
    if problem:
        return _malformed(problem)
    try:
        return ActionDocument.model_validate(raw)
    except ValidationError as exc:
        return _malformed(f"not an action document: {describe_validation_error(exc)}")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with a repeated key, what the guard checked and what
    the ledger shows could differ (a parser keeps the last, a reader sees the first)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"the key {key!r} appears twice in one object")
        found[key] = value
    return found


def shape_problem(value: Any) -> str | None:
    """Why a decoded document cannot be checked or stored, or None. Walked without recursion, so a
    hostile nesting cannot exhaust the stack: too deep, too many values, a NUL character (no
    PostgreSQL text or JSON value holds one) or a lone surrogate (not UTF-8)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            return f"the document holds more than {MAX_VALUES} values"
        if isinstance(item, str):
            if problem := _text_problem(item):
                return problem
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return f"the document is nested deeper than {MAX_DEPTH} levels"
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
    return None


def storable_problem(value: Any) -> str | None:
    """`shape_problem`, and a number some store would not give back as it is (`tools.storable`:
    an integer beyond 64 bits, NaN, an infinity, -0.0, a float of 1e16 or more): for values kept
    as they came, such as a person's reply, where a proposal is kept as text."""
    if problem := shape_problem(value):
        return problem
    if problem := unkept(value, "$"):
        return f"the document holds {problem}"
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "the document contains a NUL character (U+0000)"
    if not (text.isascii() or _encodable(text)):
        return "the document contains invalid Unicode (a lone surrogate)"
    return None


def _encodable(text: str) -> bool:
    """UTF-8 encodes every code point but a lone surrogate (checked in C, not char by char)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _malformed(detail: str) -> Refusal:
    return Refusal(RefusalCode.MALFORMED_ACTION, Owner.GUARD, detail)


def proposal_summary(raw: object) -> str:
    """A proposal's summary, kept with a batch that waits for people and is decided again later;
    `proposal` when it has none (or is not an action document)."""
    if isinstance(raw, str):
        with contextlib.suppress(ValueError, RecursionError):
            raw = json.loads(raw)
    summary = raw.get("summary") if isinstance(raw, dict) else None
    return summary if isinstance(summary, str) and summary else "proposal"
