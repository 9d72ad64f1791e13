"""Each check of the guard, with an allow case and a deny case, and the order they run in."""

from dataclasses import replace
from typing import Any

import pytest

from guards.budget import Spent
from guards.checks import call_signature, parse_proposal
from guards.decide import GuardContext, batch_after_people, decide, decide_after_people
from guards.decision import Approved, Ask, NeedsApproval, Refused, recorded_decision
from guards.receipts import ListedReceipts
from guards.refusals import Refusal, RefusalCode
from scenario.manifest import Budget
from tests.helpers import R42_HISTORY, R42_LOG, R42_SPEC, call, stop
from tools.logs import searchlogs

NOW = 1_000.0


@pytest.fixture
def ctx(r42) -> GuardContext:
    return GuardContext(scenario=r42, now=NOW, spent=Spent(turn=1, deadline_at=NOW + 120))


def spent(ctx: GuardContext, **changes: Any) -> GuardContext:
    """The context with the run having spent otherwise (`Spent`'s fields)."""
    return replace(ctx, spent=replace(ctx.spent, **changes))


def run_receipts(ctx: GuardContext, by_call_id: dict[str, str]) -> GuardContext:
    """The context of a run whose calls in `by_call_id` (id → signature) have receipts."""
    return replace(ctx, receipts=ListedReceipts(by_call_id))


def search(call_id: str = "c1", **args):
    return call(
        call_id, "searchlogs", **({"path": R42_LOG, "query": "reset_smoke", "limit": 20} | args)
    )


def codes(decision):
    return [(refusal.code.value, refusal.owner) for refusal in decision.refusals]


def test_a_valid_call_is_approved_with_its_record(ctx):
    decision = decide(search(), ctx)
    assert decision.outcome == "execute"
    assert decision.calls[0].records == {"path": R42_LOG}


@pytest.mark.parametrize(
    ("proposal", "expected"),
    [
        (search(limit=True), ("invalid_argument", "tool:searchlogs")),
        (search(limit=-1), ("invalid_argument", "tool:searchlogs")),
        (search(extra=1), ("invalid_argument", "tool:searchlogs")),
        (
            call("c1", "readspec", path="lab/protected/design.txt", section="x"),
            ("unapproved_record", "tool:readspec"),
        ),
        (search(path="lab/runs/R43/reset_smoke.log"), ("unapproved_record", "tool:searchlogs")),
        (search(path="../protected/design.txt"), ("unapproved_record", "tool:searchlogs")),
        (search(path=R42_SPEC), ("invalid_argument", "tool:searchlogs")),
        (call("c1", "run_eda", cmd="rm -rf /"), ("unknown_tool", "guard")),
        (call("c1", "stadiff", before="a", after="b"), ("unknown_tool", "guard")),
        ("{not json", ("malformed_action", "guard")),
    ],
)
def test_each_refusal_has_the_owner_of_design_section_3(ctx, proposal, expected):
    decision = decide(proposal, ctx)
    assert decision.outcome == "refused"
    assert codes(decision) == [expected]


def test_a_bad_citation_is_recorded_and_marked_but_takes_no_statement_with_it(ctx):
    decision = decide(
        stop(
            hypotheses=[
                {"statement": "clk_en rises late", "refs": ["E1", "E9"]},
                {"statement": "seen in R40", "refs": ["E7", "E9"]},
                {"statement": "the checker fired", "refs": ["E1"]},
            ]
        ),
        spent(ctx, evidence_refs=frozenset({"E1"})),
    )
    assert decision.outcome == "stop" and codes(decision) == [("unknown_reference", "guard")]
    assert "E7, E9" in decision.refusals[0].detail
    assert decision.hypotheses == (
        {"statement": "clk_en rises late", "refs": ["E1"], "unresolved": ["E9"]},
        {"statement": "seen in R40", "refs": [], "unresolved": ["E7", "E9"]},
        {"statement": "the checker fired", "refs": ["E1"]},
    )


def test_the_choice_after_the_step_budget_ends_the_run(ctx):
    decision = decide(search(), spent(ctx, turn=9))
    assert (decision.outcome, decision.status) == ("end", "step_budget_exhausted")
    assert codes(decision) == [("step_budget_exhausted", "guard")]
    assert decide(search(), spent(ctx, turn=8)).outcome == "execute"


def test_the_deadline_ends_the_run(ctx):
    decision = decide(search(), replace(ctx, now=ctx.spent.deadline_at))
    assert (decision.outcome, decision.status) == ("end", "deadline_passed")
    assert decide(search(), replace(ctx, now=ctx.spent.deadline_at - 0.001)).outcome == "execute"


def test_the_step_budget_is_checked_before_the_document(ctx):
    assert decide("garbage", spent(ctx, turn=9)).status == "step_budget_exhausted"


def test_the_same_call_again_is_a_repeated_request(ctx):
    first = decide(search(), ctx).calls[0]
    executed = {first.id: first.signature}
    decision = decide(search("c2"), run_receipts(ctx, executed))
    assert codes(decision) == [("repeated_request", "guard")]
    assert decide(search("c2", query="UVM_ERROR"), run_receipts(ctx, executed)).outcome == "execute"


def test_repetition_compares_validated_arguments(ctx):
    first = decide(search(), ctx).calls[0]
    without_default = call("c2", "searchlogs", path=R42_LOG, query="reset_smoke")
    assert codes(decide(without_default, run_receipts(ctx, {first.id: first.signature}))) == [
        ("repeated_request", "guard")
    ]


def test_a_call_id_reused_with_other_arguments_is_refused(ctx):
    executed = {
        "c1": call_signature("searchlogs", {"path": R42_LOG, "query": "reset_smoke", "limit": 20})
    }
    decision = decide(search("c1", query="UVM_ERROR"), run_receipts(ctx, executed))
    assert codes(decision) == [("duplicate_call_id", "guard")]


def test_a_batch_is_approved_whole_or_not_at_all(ctx):
    good = search()["tool_calls"][0]
    bad = call("c2", "readspec", path="lab/protected/design.txt", section="x")["tool_calls"][0]
    other = call("c3", "getrunhistory", path=R42_HISTORY, test="reset_smoke")["tool_calls"][0]
    decision = decide({"summary": "batch", "tool_calls": [good, bad, other]}, ctx)
    assert isinstance(decision, Refused)
    assert codes(decision) == [("unapproved_record", "tool:readspec")]
    assert decide({"summary": "batch", "tool_calls": [good, other]}, ctx).outcome == "execute"


def test_duplicate_ids_within_a_batch_are_refused(ctx):
    first = search("c1")["tool_calls"][0]
    second = search("c1", query="UVM_ERROR")["tool_calls"][0]
    decision = decide({"summary": "batch", "tool_calls": [first, second]}, ctx)
    assert codes(decision) == [("duplicate_call_id", "guard")]


def test_the_evidence_budget_counts_the_whole_batch(ctx):
    full = spent(ctx, evidence_refs=frozenset(f"E{n}" for n in range(1, 6)))
    assert decide(search(), full).outcome == "execute"
    batch = {
        "summary": "b",
        "tool_calls": [search("c1")["tool_calls"][0], search("c2", query="x")["tool_calls"][0]],
    }
    refused = decide(batch, full)
    assert codes(refused) == [("evidence_budget_exhausted", "guard")] * 2
    assert [refusal.call["id"] for refusal in refused.refusals] == ["c1", "c2"]


def needing_approval(r42):
    record = r42.records[R42_LOG].model_copy(update={"approval": "human"})
    return r42.model_copy(update={"records": {**r42.records, R42_LOG: record}})


def test_a_record_needing_approval_waits_for_a_person(ctx, r42):
    decision = decide(search(), replace(ctx, scenario=needing_approval(r42)))
    assert (decision.outcome, decision.needs_person) == ("approval", ("c1",))
    assert decision.calls[0].records == {"path": R42_LOG}


def test_a_call_a_person_approved_does_not_wait_again(ctx, r42):
    approved = replace(ctx, scenario=needing_approval(r42), person_approved=frozenset({"c1"}))
    assert decide(search(), approved).outcome == "execute"


def test_a_rejection_refuses_the_batch(ctx, r42):
    calls = [{"id": "c1", "name": "searchlogs", "args": {"path": R42_LOG, "query": "x"}}]
    rejected = [Refusal(RefusalCode.REJECTED, "human", "no", calls[0])]
    decision = decide_after_people(batch_after_people("s", calls), rejected, ctx)
    assert decision.outcome == "refused" and codes(decision) == [("rejected", "human")]


def test_an_edit_is_checked_again_and_cannot_widen_the_grant(ctx, r42):
    scenario = needing_approval(r42)
    edited = [
        {
            "id": "c1",
            "name": "readspec",
            "args": {"path": "lab/protected/design.txt", "section": "x"},
        }
    ]
    approved = replace(ctx, scenario=scenario, person_approved=frozenset({"c1"}))
    assert codes(decide_after_people(batch_after_people("s", edited), [], approved)) == [
        ("unapproved_record", "tool:readspec")
    ]
    narrowed = [
        {
            "id": "c1",
            "name": "searchlogs",
            "args": {"path": R42_LOG, "query": "UVM_ERROR", "limit": 2},
        }
    ]
    assert decide_after_people(batch_after_people("s", narrowed), [], approved).outcome == "execute"


def test_questions_are_admitted_within_their_budget(ctx):
    question = {
        "summary": "s",
        "message": {"kind": "ask_user", "question": "Which seed failed first?"},
    }
    decision = decide(question, ctx)
    assert (decision.outcome, decision.question) == ("ask", "Which seed failed first?")
    asked = spent(ctx, questions_asked=ctx.scenario.budget.questions)
    assert codes(decide(question, asked)) == [("question_budget_exhausted", "guard")]


def test_stop_is_allowed_and_its_hypotheses_keep_the_refs_they_cite(ctx):
    with_refs = spent(ctx, evidence_refs=frozenset({"E1", "E2"}))
    decision = decide(stop(hypotheses=[{"statement": "clk_en late", "refs": ["E1"]}]), with_refs)
    assert (decision.outcome, decision.status, decision.refusals) == ("stop", "stopped", ())
    assert decision.hypotheses == ({"statement": "clk_en late", "refs": ["E1"]},)


def test_refused_choices_beyond_the_limit_end_the_run(ctx, r42):
    limited = r42.model_copy(update={"budget": Budget(steps=8, refusals=2)})
    assert (
        decide("junk", spent(replace(ctx, scenario=limited), refused_choices=1)).outcome
        == "refused"
    )
    decision = decide("junk", spent(replace(ctx, scenario=limited), refused_choices=2))
    assert (decision.outcome, decision.status) == ("end", "refusal_limit")
    assert codes(decision) == [("malformed_action", "guard")]


def test_the_default_refusal_limit_is_the_step_budget(r42):
    assert r42.budget.refusal_limit == r42.budget.steps


def test_a_calls_arguments_are_validated_once_on_their_way_to_a_decision(ctx, monkeypatch):
    """The guard node parses a proposal once (`parse_proposal`), reads receipts for its
    signatures, and decides that parse: the tool's model validates each call's arguments once."""
    validated = []
    model = searchlogs.SearchLogsArgs
    original = model.model_validate.__func__

    def counted(cls, value, **kwargs):
        validated.append(value)
        return original(cls, value, **kwargs)

    monkeypatch.setattr(model, "model_validate", classmethod(counted))
    parsed = parse_proposal(search(), ctx.scenario.profile)
    assert parsed.signatures() == [call_signature("searchlogs", parsed.validated[0].model_dump())]
    decision = decide(parsed, ctx)
    assert isinstance(decision, Approved) and len(validated) == 1


def test_the_decision_is_recorded_in_the_shape_state_has_always_held(ctx, r42):
    """`recorded_decision` writes what checkpoints, cassettes and tests read: key for key."""
    approved = decide(search(), ctx)
    recorded = recorded_decision(approved, 1, 3, "next step")
    assert list(recorded) == ["turn", "outcome", "calls", "status", "summary"]
    assert (recorded["outcome"], recorded["status"]) == ("execute", None)
    assert list(recorded["calls"][0]) == ["id", "name", "args", "records", "ref", "sources"]
    assert recorded["calls"][0]["ref"] == "E3"
    gated = replace(ctx, scenario=needing_approval(r42))
    waiting = decide(search(), gated)
    assert isinstance(waiting, NeedsApproval)
    assert list(recorded_decision(waiting, 1, 1, "s")["calls"][0]) == [
        "id",
        "name",
        "args",
        "records",
    ]
    ended = recorded_decision(decide(search(), spent(ctx, turn=99)), 99, 1, "s")
    assert (ended["outcome"], ended["status"], ended["calls"]) == (
        "end",
        "step_budget_exhausted",
        [],
    )
    asked = decide(
        {"summary": "s", "message": {"kind": "ask_user", "question": "Q?", "blocking": False}}, ctx
    )
    assert isinstance(asked, Ask) and asked.outcome == "asked"


def test_a_tool_the_models_request_did_not_show_is_not_called(ctx):
    """A34: the surface a model was shown is what it may call, even among admitted tools."""
    shown = replace(ctx, surface=frozenset({"readspec", "getrunhistory"}))
    decision = decide(search(), shown)
    assert decision.outcome == "refused" and codes(decision) == [("unknown_tool", "guard")]
    assert "not among the tools the model's request showed" in decision.refusals[0].detail
    assert decide(search(), replace(ctx, surface=frozenset({"searchlogs"}))).outcome == "execute"
    assert decide(search(), ctx).outcome == "execute"  # no request: a script is shown no surface
