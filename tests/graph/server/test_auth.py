"""The served boundary's pure parts, without a server: who a bearer is, and what in a run
request's config a client may not set (`graph/server/auth.py`; served in tests/graph/server/test_server_identity.py
and tests/graph/server/test_server_boundary.py)."""

from __future__ import annotations

import pytest

from graph.server.auth import bearer_of, bearers, config_problem
from ledger.persistence.savers import FENCE_MESSAGE


def test_each_token_names_its_bearer_and_the_single_token_is_the_client():
    known = bearers({"WARRANT_API_TOKENS": "alice:tok1, bob:tok:2", "WARRANT_API_TOKEN": "solo"})
    assert known == {"tok1": "alice", "tok:2": "bob", "solo": "client"}
    assert [
        bearer_of(given, known)
        for given in ("Bearer tok1", "Bearer tok:2", "Bearer solo", "Bearer tok", None)
    ] == ["alice", "bob", "client", None, None]


@pytest.mark.parametrize("setting", ["alice", "alice:", "a b:SECRET", "alice:SECRET,bob:SECRET"])
def test_a_malformed_token_setting_is_one_line_naming_the_entry_not_a_token(setting):
    with pytest.raises(ValueError) as caught:
        bearers({"WARRANT_API_TOKENS": setting})
    assert "WARRANT_API_TOKENS: entry" in str(caught.value) and "\n" not in str(caught.value)
    assert "SECRET" not in str(caught.value)


SERVER_SET = {
    "langgraph_auth_user": {},
    "langgraph_request_id": "r",
    "__after_seconds__": 0,
    "x-request-id": "r",
    "user-agent": "sdk",
}


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        (
            {
                "config": {"configurable": {**SERVER_SET, "warrant_lane": "t1"}},
                "context": {"warrant_lane": "t1"},
            },
            "'warrant_lane' is refused (Warrant's routing",
        ),
        (
            {"config": {"configurable": SERVER_SET}, "context": {"__warrant_lane": "t1"}},
            "'__warrant_lane' is refused",
        ),
        (
            {"config": {"configurable": {**SERVER_SET, "__pregel_resuming": True}}},
            "'__pregel_resuming' is refused",
        ),
        (
            {"config": {"configurable": {**SERVER_SET, "thread_id": "other"}}},
            "'thread_id' is refused",
        ),
        ({"config": {"configurable": {**SERVER_SET, "checkpoint_id": "1"}}}, FENCE_MESSAGE),
        ({"config": {"configurable": {"checkpoint_ns": "child:1"}}}, "never forked"),
        (
            {"config": {"configurable": SERVER_SET, "recursion_limit": 1}},
            "recursion_limit is refused",
        ),
    ],
)
def test_a_config_key_the_server_does_not_set_is_refused_in_one_line(kwargs, said):
    problem = config_problem(kwargs, "t")
    assert problem is not None and said in problem and "\n" not in problem


def test_what_the_server_sets_itself_passes():
    assert (
        config_problem({"config": {"configurable": SERVER_SET, "tags": ["a"]}, "context": {}}, "t")
        is None
    )
    assert (
        config_problem(
            {"config": {"configurable": {"thread_id": "t", "__event_streaming_v2": True}}}, "t"
        )
        is None
    )
    assert config_problem({}) is None
