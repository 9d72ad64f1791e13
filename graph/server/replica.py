"""One replica of the LangGraph server on a shared PostgreSQL and Redis (`warrant serve`).

The stock server (`langgraph-api`) with the MIT PostgreSQL + Redis runtime (`langgraph-runtime-pg`,
`LANGGRAPH_RUNTIME_EDITION=pg`): runs queue in Redis and persist in PostgreSQL, so any number of
replicas serve the same threads, and a killed replica's runs are taken over by another after the
background-job heartbeat. Install it apart from the test tools (the runtime pins its server
release): `python3 -m venv .venv-serve && .venv-serve/bin/pip install -e '.[serve]'`.

    DATABASE_URI=postgresql://… REDIS_URI=redis://… python -m graph.server.replica --port 2024
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
from pathlib import Path
from typing import Any

RUNTIME_EDITION = "pg"
HEARTBEAT_S = 5
"""The runtime's background-job heartbeat (`LG_BG_JOB_HEARTBEAT`): a killed replica's runs are
taken over after about three of them. The server's default, 120 s, leaves them waiting ~4 min,
past many scenarios' deadlines."""
JOBS_PER_WORKER = 10
"""Runs one replica advances at once (`N_JOBS_PER_WORKER`)."""

_GRAPH = Path(__file__).resolve().parent


def served_config() -> dict[str, Any]:
    """What `langgraph.json` names, with paths from this installation: the graphs, the
    checkpointer and store (`graph/server/graphs.py`), the auth handlers (`graph/server/auth.py`)
    and the HTTP routes turned off."""
    server, auth = _GRAPH / "graphs.py", _GRAPH / "auth.py"
    return {
        "graphs": {
            "triage": f"{server}:graph",
            "sta": f"{server}:graph",
            "memory": f"{server}:memory",
        },
        "checkpointer": {"path": f"{server}:checkpointer"},
        "store": {"path": f"{server}:store"},
        "auth": {"path": f"{auth}:auth"},
        # The server's own MCP and A2A endpoints expose the graphs as tools outside Warrant's
        # governed tool surface: off, as in langgraph.json.
        "http": {"disable_mcp": True, "disable_a2a": True},
    }


def replica_environment(environ: dict[str, str]) -> dict[str, str]:
    """The environment a replica runs in: the caller's, with the heartbeat, the jobs per worker
    and the log level (`LOG_LEVEL`, WARNING) set where the caller did not set them."""
    return {
        "LG_BG_JOB_HEARTBEAT": str(HEARTBEAT_S),
        "N_JOBS_PER_WORKER": str(JOBS_PER_WORKER),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",  # no call to PyPI at each start
        "LANGSMITH_TRACING": "false",
        "LOG_LEVEL": "WARNING",
        **environ,
    }


def _plain(value: Any) -> Any:
    """The authenticated user a run's configuration carries, as JSON (its `model_dump`)."""
    if callable(getattr(value, "model_dump", None)):
        return value.model_dump()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _store_users_as_json() -> None:
    """The runtime stores a run's configuration as JSON, and with auth handlers (Warrant's deny
    by default, `graph/server/auth.py`) that configuration holds the authenticated user object, which
    `json.dumps` refuses: every run was refused with a 500. Its engine is given a serializer
    that writes the user as its `model_dump` (langgraph-runtime-pg 0.11.1.post1)."""
    import langgraph_runtime_pg.database as database

    dumps = functools.partial(json.dumps, default=_plain)
    database.create_async_engine = functools.partial(
        database.create_async_engine, json_serializer=dumps
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2024)
    options = parser.parse_args()
    os.environ.update(replica_environment(dict(os.environ)))
    os.environ.pop("LANGGRAPH_CHECKPOINTER", None)  # empty, it stops the server at start
    for chatty in ("langgraph_api.cli", "alembic"):  # its "in-memory server" welcome; migrations
        logging.getLogger(chatty).setLevel(logging.WARNING)
    from langgraph_api.cli import run_server  # the `[serve]` extra

    _store_users_as_json()

    config = served_config()
    run_server(
        options.host,
        options.port,
        False,
        config["graphs"],
        n_jobs_per_worker=int(os.environ["N_JOBS_PER_WORKER"]),
        store=config["store"],
        auth=config["auth"],
        checkpointer=config["checkpointer"],
        http=config["http"],
        runtime_edition=RUNTIME_EDITION,
        server_level=os.environ["LOG_LEVEL"],
        __database_uri__=os.environ["DATABASE_URI"],
        __redis_uri__=os.environ["REDIS_URI"],
        __migrations_path__=None,
    )


if __name__ == "__main__":
    main()
