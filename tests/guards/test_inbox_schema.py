"""Agent Inbox's human-in-the-loop shape: Warrant's interactions offered as `HITLRequest`s, and
`decisions` replies turned into Warrant's replies, checked as strictly as any other."""

from __future__ import annotations

import pytest

from guards.human import check_reply
from guards.inbox_schema import hitl_request
from guards.refusals import Refusal

APPROVAL = {
    "interaction_id": "ix-1",
    "kind": "approval",
    "records": ["lab/spec/reset_controller.md"],
    "call": {
        "id": "c2",
        "name": "readspec",
        "args": {"path": "lab/spec/reset_controller.md", "section": "reset_release"},
    },
}
QUESTION = {"interaction_id": "ix-2", "kind": "question", "question": "Which seed failed first?"}


def test_an_approval_is_one_action_request_with_approve_edit_and_reject():
    assert hitl_request(APPROVAL) == {
        "action_requests": [
            {
                "name": "readspec",
                "args": APPROVAL["call"]["args"],
                "description": "Run readspec (call c2) on lab/spec/reset_controller.md?",
            }
        ],
        "review_configs": [
            {"action_name": "readspec", "allowed_decisions": ["approve", "edit", "reject"]}
        ],
    }


def test_a_question_is_an_ask_user_action_answered_by_respond():
    assert hitl_request(QUESTION) == {
        "action_requests": [
            {
                "name": "ask_user",
                "args": {"question": "Which seed failed first?"},
                "description": "Which seed failed first?",
            }
        ],
        "review_configs": [{"action_name": "ask_user", "allowed_decisions": ["respond"]}],
    }


@pytest.mark.parametrize(
    ("interaction", "decision", "reply"),
    [
        (APPROVAL, {"type": "approve"}, {"decision": "approve"}),
        (APPROVAL, {"type": "reject", "message": "not this one"}, {"decision": "reject"}),
        (
            APPROVAL,
            {
                "type": "edit",
                "edited_action": {"name": "readspec", "args": {"path": "x", "section": "y"}},
            },
            {"decision": "edit", "args": {"path": "x", "section": "y"}},
        ),
        (QUESTION, {"type": "respond", "message": "seed 7"}, {"answer": "seed 7"}),
    ],
)
def test_each_allowed_decision_becomes_warrants_reply(interaction, decision, reply):
    given = {
        "interaction_id": interaction["interaction_id"],
        "decisions": [decision],
        "by": "alice",
    }
    assert check_reply(interaction, given) == {
        "interaction_id": interaction["interaction_id"],
        "by": "alice",
        **reply,
    }


@pytest.mark.parametrize(
    ("interaction", "decisions", "says"),
    [
        (
            APPROVAL,
            [{"type": "edit", "edited_action": {"name": "searchlogs", "args": {}}}],
            "an edit must keep the action's name, 'readspec'",
        ),
        (
            APPROVAL,
            [{"type": "respond", "message": "x"}],
            "a 'respond' decision does not answer this approval",
        ),
        (QUESTION, [{"type": "approve"}], "a 'approve' decision does not answer this question"),
        (APPROVAL, [{"type": "approve"}, {"type": "approve"}], "exactly one decision"),
        (APPROVAL, [], "exactly one decision"),
        (QUESTION, [{"type": "respond"}], "not a question reply"),
    ],
)
def test_a_decision_this_interaction_does_not_allow_is_a_malformed_reply(
    interaction, decisions, says
):
    refused = check_reply(
        interaction, {"interaction_id": interaction["interaction_id"], "decisions": decisions}
    )
    assert (
        isinstance(refused, Refusal)
        and refused.code == "malformed_reply"
        and says in refused.detail
    )


def test_the_interaction_id_stays_the_key():
    refused = check_reply(QUESTION, {"decisions": [{"type": "respond", "message": "seed 7"}]})
    assert isinstance(refused, Refusal) and refused.code == "interaction_mismatch"


STOCK_APPROVE = {"decisions": [{"type": "approve"}]}
"""LangChain's HITL middleware reply as Agent Inbox sends it: no interaction id."""


def test_a_stock_reply_is_bound_by_its_interrupt_when_its_interaction_waits_alone():
    assert check_reply(APPROVAL, STOCK_APPROVE, ["ix-1"]) == {
        "interaction_id": "ix-1",
        "decision": "approve",
    }
    edit = {
        "decisions": [
            {
                "type": "edit",
                "edited_action": {"name": "readspec", "args": {"path": "x", "section": "y"}},
            }
        ]
    }
    assert check_reply(APPROVAL, edit, ["ix-1"]) == {
        "interaction_id": "ix-1",
        "decision": "edit",
        "args": {"path": "x", "section": "y"},
    }


def test_a_stock_reply_with_several_pending_is_refused_as_ambiguous():
    refused = check_reply(APPROVAL, STOCK_APPROVE, ["ix-1", "ix-9"])
    assert isinstance(refused, Refusal) and refused.code == "interaction_mismatch"
    assert refused.detail == (
        'the reply names no interaction and 2 are pending (ix-1, ix-9): add "interaction_id"'
        " beside its decisions to say which one it answers"
    )


@pytest.mark.parametrize(
    "reply",
    [
        {**STOCK_APPROVE, "interaction_id": "ix-9"},  # names another: the name wins, and is wrong
        {"decision": "approve"},  # Warrant's own shape always names its interaction
    ],
)
def test_the_interrupt_binds_only_a_stock_reply_that_names_no_interaction(reply):
    refused = check_reply(APPROVAL, reply, ["ix-1"])
    assert isinstance(refused, Refusal) and refused.code == "interaction_mismatch"
