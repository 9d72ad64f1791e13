"""A cron's occurrences are linked to it by the server alone: the real auth handlers
(`graph/server/auth.py`) called as the server calls them — an `AuthContext` and the request's
value, a cron's stored payload handed back as its scheduler's run request — with an in-memory
store for the server's (served in tests/graph/server/test_served_crons.py)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph_sdk import Auth
from starlette.authentication import SimpleUser

from graph.server import crons
from graph.server.auth import crons_are_confirmed_schedules, only_resume_commands

CRON = "1f0c0c4e-0000-7000-8000-000000000001"


class Who(SimpleUser):
    @property
    def identity(self) -> str:
        return self.username


def context(who: str, resource: str, action: str) -> Auth.types.AuthContext:
    return Auth.types.AuthContext(
        permissions=[],
        user=Who(who),
        resource=resource,
        action=action,
    )


@pytest.fixture(autouse=True)
def store(monkeypatch) -> InMemoryStore:
    kept = InMemoryStore()

    async def server_store() -> InMemoryStore:
        return kept

    monkeypatch.setattr(crons, "server_store", server_store, raising=False)
    return kept


def refused(call: Any) -> str:
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        asyncio.run(call)
    assert caught.value.status_code == 403
    return str(caught.value.detail)


def create_cron(who: str, cron_id: str = CRON, **payload: Any) -> dict[str, Any]:
    """The value the server hands `crons.create` (it wrote the cron's id into the configurable
    first, as `Crons.put` does), after the handler ran: what the server stores."""
    given = {"input": {"scenario": "R42"}, **payload}
    given.setdefault("config", {}).setdefault("configurable", {})["cron_id"] = cron_id
    value: dict[str, Any] = {"payload": given, "cron_id": cron_id, "schedule": "* * * * *"}
    asyncio.run(crons_are_confirmed_schedules(context(who, "crons", "create"), value))
    return value


def run_request(kwargs: dict[str, Any], thread: str = "t-1") -> dict[str, Any]:
    return {"thread_id": thread, "kwargs": kwargs, "multitask_strategy": "enqueue"}


def occurrence(cron: dict[str, Any]) -> dict[str, Any]:
    """The scheduler's run request for a stored cron, as the server makes it: the payload as
    stored, the configurable with what the server adds, the context its copy."""
    payload = copy.deepcopy(cron["payload"])
    configurable = payload["config"]["configurable"]
    configurable |= {"langgraph_auth_user_id": "alice", "langgraph_request_id": None}
    context = {"cron_id": configurable["cron_id"], "langgraph_auth_user": {}}
    return {"input": payload["input"], "config": payload["config"], "context": context}


def create_run(who: str, request: dict[str, Any]) -> None:
    asyncio.run(only_resume_commands(context(who, "threads", "create_run"), request))


def test_the_crons_own_occurrence_is_linked_by_the_server():
    cron = create_cron("alice")
    assert "schedule" not in (cron["payload"]["config"]["configurable"])
    request = run_request(occurrence(cron))
    create_run("alice", request)
    link = request["kwargs"]["input"]["schedule"]
    assert link["id"] == f"cron:{CRON}" and link["confirmed_by"] == "alice"
    assert set(link) == {"id", "manifest_sha256", "confirmed_by"}


def test_a_run_given_a_cron_id_by_its_client_is_refused():
    cron = create_cron("alice")
    forged_link = {"id": f"cron:{CRON}", "manifest_sha256": "a" * 64, "confirmed_by": "alice"}
    for kwargs in (
        {"input": {"scenario": "R42", "schedule": forged_link}, "config": {"configurable": {}}},
        {"input": {"scenario": "R42"}, "config": {"configurable": {}}},
        {"input": {"scenario": "R42"}, "context": {}},
    ):
        kwargs.get("config", {}).setdefault("configurable", {})["cron_id"] = CRON
        kwargs.get("context", {})["cron_id"] = CRON
        detail = refused(
            only_resume_commands(context("bob", "threads", "create_run"), run_request(kwargs))
        )
        assert "cron_id" in detail or "never given" in detail, detail
    stolen = occurrence(cron)  # even the cron's token, under another cron's id
    stolen["config"]["configurable"]["cron_id"] = "1f0c0c4e-0000-7000-8000-000000000002"
    assert "never given" in refused(
        only_resume_commands(context("bob", "threads", "create_run"), run_request(stolen))
    )


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ({"config": {"configurable": {"warrant_lane": "t1"}}}, "'warrant_lane' is refused"),
        ({"context": {"warrant_lane": "t1"}}, "'warrant_lane' is refused"),
        ({"config": {"configurable": {"__pregel_resuming": True}}}, "'__pregel_resuming'"),
        ({"config": {"configurable": {"checkpoint_id": "1"}}}, "never forked"),
        ({"config": {"configurable": {}, "recursion_limit": 1}}, "recursion_limit is refused"),
        ({"context": {"cron_id": "someone-else"}}, "'cron_id' is refused"),
    ],
)
def test_a_cron_whose_config_a_run_would_be_refused_is_refused_at_creation(payload, said, store):
    detail = refused(
        crons_are_confirmed_schedules(
            context("alice", "crons", "create"),
            {
                "payload": {
                    "input": {"scenario": "R42"},
                    **payload,
                    "config": {
                        **payload.get("config", {}),
                        "configurable": {
                            **payload.get("config", {}).get("configurable", {}),
                            "cron_id": CRON,
                        },
                    },
                },
                "cron_id": CRON,
            },
        )
    )
    assert said in detail and "\n" not in detail
    assert store.search(crons.LINKS) == []  # nothing linked


def test_a_deleted_crons_token_links_nothing():
    from graph.server.auth import forget_link

    cron = create_cron("alice")
    asyncio.run(forget_link(context("bob", "crons", "delete"), {"cron_id": CRON}))  # not bob's
    create_run("alice", run_request(occurrence(cron)))
    asyncio.run(forget_link(context("alice", "crons", "delete"), {"cron_id": CRON}))
    assert "never given" in refused(
        only_resume_commands(
            context("alice", "threads", "create_run"), run_request(occurrence(cron))
        )
    )
