"""The shapes of what a run writes: proposal, decision, refusal, interaction, event, evidence item,
handover (DESIGN §5–6). Plain `TypedDict`s over JSON values, as the state and the store hold them
(every checkpointer and the LangGraph server store JSON; a class instance would not round-trip).
A field whose value is one of `contract.codes`' enums holds that enum's value.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict  # pydantic needs it for the server's schemas on 3.11


class Proposal(TypedDict, total=False):
    """A chooser's proposal as received, recorded before it is parsed."""

    turn: int
    actor: str
    """`chooser:scripted`, `chooser:file`, `chooser:model`, …"""
    raw: Any
    """The action document as the chooser gave it (text or JSON); None when the model was not
    asked (`not_asked` says why) or gave nothing usable."""
    not_asked: str
    at: float


class RecordedFamily(TypedDict, total=False):
    """The records a family tool read together (`scenario.registry.Family`), as a decision
    and a receipt record them: never every member, which the grant holds."""

    name: str
    """The manifest's glob, or `N listed record(s)`."""
    glob: str | None
    """The glob: its members are the grant's `families[glob]`."""
    ids: list[str]
    """A listed family's ids (absent for a glob's)."""
    members: int
    sha256: str
    """Of each member's id and sha256, in order."""
    share: str
    """`local` when any member is."""


class RecordedCall(TypedDict, total=False):
    """An approved call as the recorded decision holds it (`guards.decision.ApprovedCall`)."""

    id: str
    name: str
    args: dict[str, Any]
    """The arguments as the tool's model validated them."""
    records: dict[str, str]
    """Argument field → the approved record id it names."""
    sources: dict[str, Any]
    """Argument field → the admitted record (id, path, sha256, identity) the executor reads."""
    ref: str
    """The evidence ref its receipt will have (`E4`)."""
    family: RecordedFamily
    """A family tool's family."""


class RecordedDecision(TypedDict, total=False):
    """The guard's decision on the latest proposal, as recorded (`guards.decision.Decision`)."""

    turn: int
    outcome: str
    """An `Outcome` value."""
    calls: list[RecordedCall]
    status: str | None
    """A `Status` value for `stop` and `end`."""
    summary: str
    tasks: list[dict[str, Any]]
    """For `delegate`: the child investigations started, in order."""
    note: dict[str, Any]
    """For `remember`: the note proposed (text, signature, refs), waiting for a person."""


class RecordedRefusal(TypedDict, total=False):
    """A refusal as recorded (`guards.refusals.Refusal.to_dict`, with its turn)."""

    turn: int
    code: str
    """A `RefusalCode` value."""
    owner: str
    """An `Owner` value or `tool:<name>`."""
    detail: str
    call: dict[str, Any] | None
    """The offending call as proposed (bounded), or None when the whole document was refused."""


class Interaction(TypedDict, total=False):
    """Something a person is asked: a question, or a call to approve."""

    interaction_id: str
    kind: str
    """An `InteractionKind` value."""
    thread: str
    turn: int
    asked_at: float
    lane: str
    """A child's lane (who asks); absent for main."""
    reply_by: float
    """When the reply is due; a later reply is kept as data and not used (`guards.parking`)."""
    question: str
    blocking: bool
    """False for a question the run does not wait for (absent: it waits)."""
    call: dict[str, Any]
    """For an approval: the call as approved (id, name, args); for a note: `remember`, its text."""
    records: list[str]
    approvers: list[str]
    """For an approval: the people who may decide it, when the scenario names them."""


class ExecuteTask(TypedDict):
    """What the guard sends to `execute` for one approved call (`Send`), sealed for its run
    (`ledger.integrity.sealed_payload`); plain JSON, as checkpoints and the server hold it."""

    call: RecordedCall
    """The approved call with its ref, without its `sources` (they are `records`)."""
    profile: str
    manifest: str
    manifest_sha256: str
    records: dict[str, Any]
    """Argument field → the admitted record the executor reads (the call's `sources`)."""
    turn: int
    deadline_at: float
    call_s: float
    hooks: list[dict[str, Any]]
    redact: list[dict[str, Any]]
    members: NotRequired[list[dict[str, Any]]]
    """A listed family's members as admitted (the grant's records), in order."""
    members_digest: NotRequired[str]
    """A glob family's members: the digest of their store item as admitted (`ledger.members`)."""
    mcp: NotRequired[dict[str, Any]]
    """An MCP tool's call: `tool`, the tool as admitted (its pinned schema), and `server`, its
    `[[mcp]]` table (how to reach it)."""


class HumanTask(TypedDict):
    """What the guard's router sends to `human` for one pending interaction, sealed likewise."""

    interaction: Interaction
    pending: NotRequired[list[str]]
    """The ids of every interaction asked with it (absent from tasks sent before it was carried)."""
    unattended: NotRequired[bool]
    """A scheduled run's: nobody waits on it, so it is recorded unasked (`nodes.human`)."""


class Event(TypedDict, total=False):
    """One ledger entry (DESIGN §6); `seq` and `prev` are added when it is committed."""

    type: str
    """An `EventKind` value."""
    time: str
    turn: int
    actor: str
    payload: dict[str, Any]
    seq: int
    prev: str | None
    """The digest of the event before it: the chain `warrant events --verify` checks."""


class ExcerptLine(TypedDict):
    line: int
    text: str
    flags: list[str]


class EvidenceItem(TypedDict, total=False):
    """A receipt: a tool's observation (`E` ref) or a person's answer (`H` ref)."""

    ref: str
    kind: str
    """`observation` or `human_answer`."""
    call_id: str
    turn: int
    tool: str
    args: dict[str, Any]
    record: str | None
    sha256: str | None
    """The admitted sha256 of the record read."""
    sources: list[dict[str, Any]]
    """The single records read (id and sha256); a family's members are in `family`."""
    provenance: dict[str, Any]
    """Its provenance (`guards.provenance.Provenance.as_record`): sources, and the local ones."""
    family: RecordedFamily
    """A family tool's family: `record` and `sha256` are its name and digest."""
    summary: str
    excerpt: list[ExcerptLine]
    truncated: bool
    flags: list[str]
    error: str | None
    """A `RefusalCode` value when the record could not be read."""
    unknowns: list[str]
    """What the reading could not tell (a family's members with no verdict, …), when it says."""
    attempt: int
    """2 or more: an earlier attempt of the call may have run before a crash."""
    body: dict[str, Any]
    """In the store: the excerpt's digest and line count, its lines stored once by content."""
    lane: str
    """The child lane that gathered it (`t1`), with its ref there (`lane_ref`); absent for main's."""
    lane_ref: str
    computed: dict[str, Any]
    """An analysis's receipt (`analyze`): the query, the result's columns, first rows and row
    count, and a plot asked for. Analysis, not a source fact: a figure from it is shown as
    computed, with its query."""
    shown: dict[str, Any]
    """What the model is shown of it when post-call hooks narrowed it: `by` (hook names), and
    `summary` and `excerpt` (the narrowed projection), or `withheld` with why (nothing shown)."""


class EntryRecord(TypedDict):
    """Entry's decision as a research run's `admitted` event records it (`warrant ask`)."""

    question: str
    route: str
    """`direct` or `research`."""
    reason: str
    by: str
    """`entry:rules` or `entry:model`."""


class Handover(TypedDict, total=False):
    """The report a run ends with: evidence and unknowns, never a root cause."""

    thread_id: str
    scenario: str
    goal: str
    status: str
    """A `Status` value."""
    turns: int
    budget: dict[str, Any]
    statement: str
    evidence: list[EvidenceItem]
    unknowns: list[str]
    refusals: list[RecordedRefusal]
    hypotheses: list[dict[str, Any]]
    chooser_stop_text: str
    stopped_by: dict[str, Any]
    """Who stopped the run (`warrant stop`), when they asked and why; absent otherwise."""
    ending: str
    """How the run ended (`guards.finalize.Ending`): completed, stopped, budget, deadline,
    expired, model_failed, capability_gap, refused, tampered."""
    ending_reasons: list[str]
    """Why: the ending's own reason, then what failed along the way without ending the run."""
    lane: str
    """A child investigation's lane (`t1`); absent for main."""
    children: list[dict[str, Any]]
    """The handoffs of the children the run delegated to (`nodes.handoff`): their evidence refs,
    the lines they read, their unknowns, their statements (marked as theirs), status and spend."""
    memory: list[dict[str, Any]]
    """Notes recalled from memory (`M…`): history, never evidence; each with its note id, version,
    sha256 and query, and its text, or `forgotten` once the note was forgotten."""
    remembered: list[dict[str, Any]]
    """Notes people approved from this run's proposals, saved to memory: id, version, who."""
    skills: list[dict[str, Any]]
    """The skill versions that reached a model (id, version, sha256)."""
    report: str
    """A continuation's report: the first run's thread (a run's own report is its thread's)."""
    revision: int
    """1 for a run's own report; a continuation's is its parent's plus one."""
    parent: str
    """A continuation's parent thread; absent otherwise."""
