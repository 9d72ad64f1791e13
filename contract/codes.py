"""The run's vocabulary: refusal codes, who owns a refusal, how a run ended (and the status it
projects to), a decision's outcome.

Every module that emits or compares one of these uses the enum, never the string: a code is
decided in one place (the README's "who rejects what" table names the function), and
`tests/test_layering.py` finds any string literal equal to a code outside this module. This
module imports nothing of the project, so `tools/`, `guards/`, `nodes/` and `graph/` all can.
"""

from __future__ import annotations

from enum import StrEnum


class RefusalCode(StrEnum):
    # Owned by a tool (its strict argument model or its record registry).
    INVALID_ARGUMENT = "invalid_argument"
    UNAPPROVED_RECORD = "unapproved_record"
    RECORD_CHANGED = "record_changed"
    RECORD_UNAVAILABLE = "record_unavailable"
    TOOL_TIMEOUT = "tool_timeout"
    OUTCOME_UNKNOWN = "outcome_unknown"
    """A write sent before a crash whose result was never recorded: not sent again."""
    UNSTORABLE_RESULT = "unstorable_result"
    """A result holding what no store keeps as it is (a NUL, a lone surrogate): not recorded."""
    UNREADABLE_FIGURE = "unreadable_figure"
    """A figure in the record no arithmetic keeps (a slack of 1e999): the call fails, not the run."""
    # Owned by the guard.
    MALFORMED_ACTION = "malformed_action"
    UNKNOWN_TOOL = "unknown_tool"
    UNKNOWN_REFERENCE = "unknown_reference"
    STEP_BUDGET_EXHAUSTED = "step_budget_exhausted"
    EVIDENCE_BUDGET_EXHAUSTED = "evidence_budget_exhausted"
    DEADLINE_PASSED = "deadline_passed"
    REPEATED_REQUEST = "repeated_request"
    DUPLICATE_CALL_ID = "duplicate_call_id"
    QUESTION_BUDGET_EXHAUSTED = "question_budget_exhausted"
    LOCAL_DATA = "local_data"
    """A call to a remote party whose arguments are derived from local content."""
    # Owned by the guard, deciding a delegation (child investigations).
    DELEGATION_TOO_DEEP = "delegation_too_deep"
    TOO_MANY_CHILDREN = "too_many_children"
    DUPLICATE_TASK_ID = "duplicate_task_id"
    CHILD_BUDGET_EXCEEDED = "child_budget_exceeded"
    # Owned by a hook (`hook:<name>`): a pre-call hook's block, a post-call hook's rewrite.
    HOOK_BLOCKED = "hook_blocked"
    HOOK_REWROTE_FACT = "hook_rewrote_fact"
    # Owned by a person, or by the human node that receives their reply.
    REJECTED = "rejected"
    INTERACTION_MISMATCH = "interaction_mismatch"
    MALFORMED_REPLY = "malformed_reply"
    INTERACTION_EXPIRED = "interaction_expired"
    NOT_AN_APPROVER = "not_an_approver"
    # Owned by the runtime (admission and the run's own bookkeeping).
    THREAD_IN_USE = "thread_in_use"
    STATE_TAMPERED = "state_tampered"


class Owner(StrEnum):
    """Who refused; a tool's refusals are owned by `tool_owner(name)`."""

    GUARD = "guard"
    HUMAN = "human"
    RUNTIME = "runtime"


def tool_owner(name: str) -> str:
    return f"tool:{name}"


class Status(StrEnum):
    """A run's `status` in its `--json` handover: DESIGN §6's public contract, kept for it. People
    read the `Ending`; an ended run's status is `status_of(its ending)`. Nodes still ask for an
    end in this vocabulary (the state's `status`), and `awaiting_human` is no ending at all."""

    STOPPED = "stopped"
    STEP_BUDGET_EXHAUSTED = "step_budget_exhausted"
    DEADLINE_PASSED = "deadline_passed"
    REFUSAL_LIMIT = "refusal_limit"
    AWAITING_HUMAN = "awaiting_human"
    MODEL_FAILED = "model_failed"
    CAPABILITY_GAP = "capability_gap"
    """The request did not fit the model route's context budget."""
    STATE_TAMPERED = "state_tampered"
    """The run found values it did not write; the handover says which."""


class Ending(StrEnum):
    """How a run ended (`guards.finalize`): the one vocabulary people read (`ended: completed`).
    It tells a chooser's own end from a person's stop, a deadline from the manifest's hard end;
    the handover's `status` is its projection (`status_of`)."""

    COMPLETED = "completed"
    """The chooser ended the investigation itself."""
    STOPPED = "stopped"
    """A person stopped it (`warrant stop`, the server's `runs.cancel`)."""
    BUDGET = "budget"
    DEADLINE = "deadline"
    EXPIRED = "expired"
    """The manifest's hard end (`expires_at`) passed."""
    MODEL_FAILED = "model_failed"
    CAPABILITY_GAP = "capability_gap"
    REFUSED = "refused"
    """Too many proposals in a row were refused."""
    TAMPERED = "tampered"


_STATUS_OF = {
    Ending.COMPLETED: Status.STOPPED,
    Ending.STOPPED: Status.STOPPED,
    Ending.BUDGET: Status.STEP_BUDGET_EXHAUSTED,
    Ending.DEADLINE: Status.DEADLINE_PASSED,
    Ending.EXPIRED: Status.DEADLINE_PASSED,
    Ending.MODEL_FAILED: Status.MODEL_FAILED,
    Ending.CAPABILITY_GAP: Status.CAPABILITY_GAP,
    Ending.REFUSED: Status.REFUSAL_LIMIT,
    Ending.TAMPERED: Status.STATE_TAMPERED,
}


def status_of(ending: Ending) -> Status:
    """The handover's `status` (DESIGN §6) for a run that ended so: the one projection of an
    ending, coarser than it (a chooser's end and a person's stop are both `stopped`)."""
    return _STATUS_OF[ending]


class Outcome(StrEnum):
    """What the guard decided of a proposal; the last two are the human node's."""

    EXECUTE = "execute"
    REFUSED = "refused"
    STOP = "stop"
    END = "end"
    ASK = "ask"
    APPROVAL = "approval"
    AWAIT = "await"
    """A batch waits for people: asked again, not decided again."""
    ANSWERED = "answered"
    """People answered a question; the chooser takes the next turn."""
    DELEGATE = "delegate"
    """Child investigations start, one per task; the chooser takes the next turn after all hand off."""
    ASKED = "asked"
    """A question asked without waiting (`"blocking": false`): the chooser takes the next turn."""
    RECALL = "recall"
    """Notes recalled from memory (`M…`: history, never evidence); the chooser takes the next turn."""
    REMEMBER = "remember"
    """A note proposed for memory: it waits for a person to approve, edit or reject it."""


class EventKind(StrEnum):
    """The ledger's event types (DESIGN §6)."""

    ADMITTED = "admitted"
    PROPOSED = "proposed"
    REFUSED = "refused"
    APPROVED = "approved"
    EXECUTING = "executing"
    """A call is about to run (its intent): it may have run if no `executed` follows."""
    EXECUTED = "executed"
    REQUESTED = "requested"
    """A model request was sent."""
    MODEL_REPLIED = "model_replied"
    DELEGATED = "delegated"
    """A child investigation was started (one event per task)."""
    HANDED_OFF = "handed_off"
    """A child investigation ended and its handoff was received."""
    INTERRUPTED = "interrupted"
    RESUMED = "resumed"
    EXPIRED = "expired"
    """A reply came after its interaction's reply time: the interaction expired unanswered."""
    ASKED = "asked"
    """A non-blocking question was opened: the run goes on while it waits for an answer."""
    REPLIED = "replied"
    """A person's reply to a non-blocking question, as saved (its time is when it was saved)."""
    ADOPTED = "adopted"
    """The run took a saved reply in: it became evidence `H…`."""
    RECALLED = "recalled"
    """Memory was searched for a `recall` call: the notes found, by ref, id and version."""
    REMEMBERED = "remembered"
    """A person approved (or edited) a note the chooser proposed, and it was saved to memory."""
    UNPARKED = "unparked"
    """People replied: the work deadline moved on by the time the run waited (`guards.parking`)."""
    CORRECTED = "corrected"
    """A person's correction (`warrant correct`), as given; the `adopted` event after it names its ref."""
    STOP_REQUESTED = "stop_requested"
    """The run took in a person's stop (`warrant stop`) at a safe point: who, when asked, why."""
    STOPPED = "stopped"
    HANDOVER = "handover"
    ENTERED = "entered"
    """Entry answered a question directly from reference material (`warrant ask`): the question,
    the route and its reason, what was read. A research route's decision is in its run's
    `admitted` event instead."""


class InteractionKind(StrEnum):
    """What a person is asked: to answer a question, or to approve (or edit, or reject) a call."""

    QUESTION = "question"
    APPROVAL = "approval"
    REMEMBER = "remember"
    """A note the chooser proposed for memory, shaped as a call (`remember` with `text`)."""


OBSERVATION, ANSWER, RECOLLECTION = "E", "H", "M"
"""The prefixes of evidence refs, numbered from 1 without gaps: a tool's observation (`E1`, `E2`,
…) and a person's answer (`H1`, …); and a note recalled from memory (`M1`, …), history that is
never evidence. What counts against the evidence budget is an observation."""
