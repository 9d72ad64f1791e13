"""Where the server keeps runs: `langgraph dev` as the command line does; a shared runtime on its
PostgreSQL only, never a file its replicas do not share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract.errors import ErrorKind
from graph.server.replica import served_config
from graph.server.serve import ServeError, environment
from ledger.persistence.locations import SharedStorageRequired, default_db, served_db

ROOT = Path(__file__).resolve().parents[3]
PG = "postgresql://postgres@127.0.0.1:5432/runs"


def test_langgraph_dev_keeps_runs_where_the_command_line_does():
    assert served_db({}) == default_db({})
    assert (
        served_db({"LANGGRAPH_RUNTIME_EDITION": "inmem", "WARRANT_DB": "runs.sqlite"})
        == "runs.sqlite"
    )


@pytest.mark.parametrize(
    ("environ", "db"),
    [
        ({"DATABASE_URI": PG}, PG),
        ({"DATABASE_URI": "postgresql+asyncpg://postgres@127.0.0.1:5432/runs"}, PG),
        ({"DATABASE_URI": "postgres://elsewhere/x", "WARRANT_DB": PG}, PG),
    ],
)
def test_a_shared_runtime_keeps_runs_in_its_postgresql(environ, db):
    assert served_db({"LANGGRAPH_RUNTIME_EDITION": "pg", **environ}) == db


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({}, "'unset'"),
        ({"DATABASE_URI": "sqlite:///runs.sqlite"}, "'sqlite:///runs.sqlite'"),
        (
            {"DATABASE_URI": PG, "WARRANT_DB": ".warrant/warrant.sqlite"},
            "'.warrant/warrant.sqlite'",
        ),
        ({"DATABASE_URI": PG, "WARRANT_DB": "memory"}, "'memory'"),
    ],
)
def test_a_shared_runtime_refuses_anything_its_replicas_do_not_share(environ, named):
    with pytest.raises(SharedStorageRequired) as refused:
        served_db({"LANGGRAPH_RUNTIME_EDITION": "pg", **environ})
    assert str(refused.value).endswith(f"must be a postgresql:// URL, not {named}")


def test_replicas_are_given_the_runtime_its_database_and_no_migrations_of_their_own():
    env = environment(PG, "redis://127.0.0.1:6379/3", {"PATH": "/bin"})
    assert env["LANGGRAPH_RUNTIME_EDITION"] == "pg" and env["WARRANT_DB"] == PG
    assert env["LG_RUNTIME_PG_AUTO_MIGRATE"] == "false" and env["PATH"] == "/bin"


@pytest.mark.parametrize(
    ("database", "redis", "message"),
    [
        ("", "redis://127.0.0.1:6379/0", "must be a postgresql:// URL, not 'unset'"),
        (PG, "", "REDIS_URI must be a redis:// URL, not 'unset'"),
        (PG, "127.0.0.1:6379", "REDIS_URI must be a redis:// URL, not '127.0.0.1:6379'"),
    ],
)
def test_a_replica_set_without_its_shared_services_is_refused_in_one_line(database, redis, message):
    with pytest.raises(ServeError) as refused:
        environment(database, redis, {})
    assert str(refused.value).endswith(message) and refused.value.kind == ErrorKind.BAD_INPUT


def test_a_replica_serves_what_langgraph_json_names():
    declared = json.loads((ROOT / "langgraph.json").read_text())
    served = served_config()
    assert served["graphs"] == {name: _resolved(spec) for name, spec in declared["graphs"].items()}
    for key in ("checkpointer", "store", "auth"):
        assert served[key]["path"] == _resolved(declared[key]["path"])
    assert served["http"] == declared["http"] == {"disable_mcp": True, "disable_a2a": True}


def _resolved(spec: str) -> str:
    """`./graph/server.py:graph` from the project root, as an absolute path."""
    path, _, attribute = spec.partition(":")
    return f"{(ROOT / path).resolve()}:{attribute}"
