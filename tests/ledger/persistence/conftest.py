"""The stores the persistence tests run on: a SQLite file and a PostgreSQL database of the test's
own (a module that needs other stores defines its own `db`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "w.sqlite")
