"""The run's state: what a caller gives, and everything a resume needs.

State holds plain JSON-able values only (dicts, lists, strings, numbers), so that every checkpointer
and the LangGraph server can store it, and no node keeps process-local state. The shapes of its
values are the contract's (`contract/shapes.py`).
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, Required, get_args, get_origin, get_type_hints

from typing_extensions import TypedDict  # pydantic needs it for schemas on Python 3.11

from contract.shapes import (
    Event,
    Handover,
    Interaction,
    Proposal,
    RecordedDecision,
    RecordedRefusal,
)


def gather(
    existing: list[dict[str, Any]], new: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """What parallel tasks leave for the next node to commit (`ledger.store`); `None` clears it."""
    return [] if new is None else [*existing, *new]


def merge_replies(existing: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A reply, once accepted, is final: a second reply to the same interaction changes nothing."""
    return {**new, **existing}


def append(existing: list[Any], new: list[Any]) -> list[Any]:
    return [*existing, *new]


def merge_seals(existing: dict[str, str], new: dict[str, str]) -> dict[str, str]:
    """The seal of each channel's latest value (`ledger.integrity`)."""
    return {**existing, **new}


class RunInput(TypedDict):
    """What a caller gives to start a run (CLI, Studio, SDK or embedded)."""

    scenario: Required[str]
    """A built-in scenario id (`R42`) or a path to a manifest `.toml`."""
    goal: NotRequired[str]
    """Overrides the manifest's goal."""
    chooser: NotRequired[str]
    """`scripted` (default) or `file:PATH`, as on the command line."""
    message_id: NotRequired[str]
    """The client's message id; a retry with the same id and body finds this run."""
    parent: NotRequired[str]
    """A finished run's thread to continue (`nodes.continuation`): its evidence carried in."""
    schedule: NotRequired[dict[str, Any]]
    """The confirmed schedule this run is an occurrence of (`guards.schedule.ScheduleLink`): the
    run never waits for people, and is not admitted if its scenario changed since."""


class ChildInput(TypedDict):
    """What a child investigation's graph is started with: its task, as the delegating run pinned
    and sealed it (`graph.children`)."""

    child: Required[dict[str, Any]]


class WarrantState(TypedDict, total=False):
    scenario: str
    """The scenario reference as given."""
    goal: str
    """The goal pinned at admission."""
    chooser: str
    """The chooser spec pinned at admission."""
    message_id: str
    """The client's message id the run was started with (`RunInput.message_id`)."""
    child: dict[str, Any]
    """A child investigation's task as pinned (task, lane, grant, chooser, deadline, depth);
    absent for main."""
    depth: int
    """0 for main, 1 for its children, 2 for theirs."""
    delegated: list[str]
    """The task ids this run delegated (a task id is used once per run)."""
    child_chooser: str
    """The chooser spec this run's children use, pinned at admission."""
    request_sha256: str
    """The sha256 of the admitted request body, compared when a message id is reused."""
    route: dict[str, Any]
    """The model route pinned at admission (model choosers only); never holds a key."""
    route_admission: dict[str, str]
    """What admitted the model route for the profile (`guards.route_admission`): the passing
    evaluation report's figures, or a person's override with the refusal it overrode."""
    request: dict[str, Any]
    """The latest model request: sha256 and manifest, recorded before dispatch (its text is a
    body in the store)."""
    failed_attempts: int
    """Consecutive failed model attempts (errors, truncation, malformed output)."""
    grant: dict[str, Any]
    """The loaded scenario (records with their sha256) pinned at admission."""
    admitted_at: float
    """When the run was admitted (the context's clock, seconds since the epoch)."""
    deadline_at: float
    """`admitted_at` plus the budget's `deadline_s` (never past its `expires_at`), moved on by the
    time the run was parked waiting for people (`guards.parking`): past it, the guard ends the run."""
    parked_s: float
    """Seconds the run has waited for people, in all."""
    parent: str
    """For a continuation (`warrant continue`): the thread of the finished run it continues."""
    report: str
    """The report this run's handover is a revision of: the first run's thread."""
    revision: int
    """This run's handover's revision of the report: 1, or its parent's plus one."""
    unanswered: list[str]
    """Questions whose reply time passed without a reply (shown among the unknowns)."""
    recalls: list[str]
    """The queries this run recalled from memory (`guards.recall.query_key`): one is not repeated."""
    remembered: list[dict[str, Any]]
    """Notes people approved from this run's proposals, saved to memory (`nodes.remember`)."""
    open_questions: list[dict[str, Any]]
    """Non-blocking questions not yet answered (`nodes.questions`); few, and replaced whole."""
    turn: int
    """Chooser turns taken so far."""
    proposal: Proposal
    """The latest proposal as received (`turn`, `actor`, `raw`), recorded before it is parsed."""
    decision: RecordedDecision
    """The guard's decision on the latest proposal."""
    cursor: dict[str, Any]
    """How much of the run's record is committed to the store (`ledger.store`): events with the
    digest of the last one, receipts (E and H refs), model calls. The ledger, evidence and model
    attempts themselves live in the store, never in a checkpoint."""
    arrivals: Annotated[list[dict[str, Any]], gather]
    """Receipts and events of the tasks of the last step, until the next node commits them."""
    refusals: Annotated[list[RecordedRefusal], append]
    """Every refusal (at most a few per refused choice, which the refusal limit bounds)."""
    refused_choices: int
    """Choices the guard refused in this run; one past the budget's refusal limit ends it."""
    hypotheses: list[dict[str, Any]]
    """The chooser's closing statements, each citing existing refs."""
    pending: list[Interaction]
    """Interactions waiting for a person: questions, or calls waiting for approval."""
    replies: Annotated[dict[str, dict[str, Any]], merge_replies]
    """Accepted replies by interaction id."""
    questions_asked: int
    """Questions put to a person so far, against the budget's `questions`."""
    stop_text: str
    """The chooser's stop text, or why the run ended (a model failure, a capability gap)."""
    status: str
    """A `contract.codes.Status` value once the run is ending; absent while it runs."""
    corrections: int
    """People's corrections the run took in (`nodes.control`), each an `H…` item."""
    schedule: dict[str, Any]
    """The schedule occurrence this run is (`guards.schedule.ScheduleLink`), as admitted: nobody
    waits on it, so what it would ask a person is recorded unasked (`nodes.human`)."""
    started_by: str
    """The served caller who started the run (the server's identity; absent when embedded): the
    only one who may stop it through the server (`runs.cancel`, `graph.server.control`)."""
    stopped_by: dict[str, Any]
    """A person's stop the run took in (`nodes.control`): who, when they asked, why."""
    handover: Handover
    """The final report; present once the run has ended."""
    view: dict[str, Any]
    """What the last step did, for a person watching the state (Studio): its node, the turn's
    proposal and decision, the receipts and refusals it committed (`nodes.watched`); replaced at
    every step, never accumulated."""
    messages: list[dict[str, Any]]
    """The goal as the person's message and the published handover as the agent's (`nodes.watched`),
    in the shape chat clients read; bounded."""
    seals: Annotated[dict[str, str], merge_seals]
    """The seal of every other channel's value, by channel: proof the run wrote it."""
    tampered: Annotated[list[dict[str, Any]], append]
    """Where values the run did not write were found (then the run ends `state_tampered`)."""


class StepUpdate(WarrantState, total=False):
    """What a node returns: state channels, and what the governed wrapper commits to the run's
    record in the store instead of keeping it in the state (`ledger.commit.RECORDED`)."""

    events: list[Event]
    """The step's ledger events, numbered and chained when committed."""
    evidence: list[dict[str, Any]]
    """Its receipts and answers (E and H refs), their excerpts stored as bodies."""
    model_calls: list[dict[str, Any]]
    """Its model attempts."""
    handoffs: list[dict[str, Any]]
    """Children's handoffs it received."""
    notes: list[dict[str, Any]]
    """The notes it recalled from memory (M refs: ids, versions, digests, never text)."""


def _reducers() -> dict[str, tuple[Any, type]]:
    """Each reducer channel of `WarrantState`: its reducer and the type of its empty value."""
    found = {}
    for name, hint in get_type_hints(WarrantState, include_extras=True).items():
        if get_origin(hint) is Annotated:
            base, reducer = get_args(hint)[:2]
            found[name] = (reducer, get_origin(base) or base)
    return found


REDUCERS = _reducers()


def apply_update(state: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """The state after `update`, as LangGraph will compute it (reducer channels fold, others are
    replaced); for a node that goes on in the same superstep."""
    after = dict(state)
    for key, value in update.items():
        if key in REDUCERS:
            reducer, empty = REDUCERS[key]
            after[key] = reducer(state.get(key) or empty(), value)
        else:
            after[key] = value
    return after
