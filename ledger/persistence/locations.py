"""Where runs are kept: `--db`'s values (`memory`, a SQLite file, `postgresql://…`), the default
store (a project's `.warrant/`, else the user's), and how a message names one.

Plain paths and strings: the command line's every start reads them (`warrant --help` says which
store is the default here), so nothing here loads a checkpointer or a driver.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from platformdirs import user_data_path

PROJECT_FOLDER = ".warrant"
STORE_FILE = "warrant.sqlite"


def project_store(start: Path | None = None) -> Path | None:
    """The store of the nearest project: a `.warrant/` folder found from `start` (the current
    folder) upward, as git finds `.git`. Runs started anywhere in a project are kept together."""
    try:
        here = start or Path.cwd()
    except OSError:  # the current folder was removed
        return None
    for folder in (here, *here.parents):
        try:
            if (folder / PROJECT_FOLDER).is_dir():
                return folder / PROJECT_FOLDER / STORE_FILE
        except OSError:  # a folder we may not look into
            continue
    return None


def user_store() -> Path:
    """The user's store (`$XDG_DATA_HOME/warrant/warrant.sqlite`, `~/.local/share/…` by default):
    one per user, so that an approver finds every pending approval from any folder."""
    return user_data_path("warrant", appauthor=False) / STORE_FILE


def default_db(environ: Mapping[str, str] = os.environ) -> str:
    """`$WARRANT_DB`, else the nearest project's store, else the user's: never a new store made
    silently in the current folder (a project is one that has a `.warrant/` folder)."""
    return environ.get("WARRANT_DB") or str(project_store() or user_store())


def shown_db(db: str) -> str:
    """`db` as a message names it: a URL without its password, a file in the home folder from `~`."""
    if db == "memory" or is_postgres(db):
        return redact(db)
    try:
        path = Path(db)
        if path.is_absolute() and path.is_relative_to(home := Path.home()):
            return str(Path("~") / path.relative_to(home))
    except RuntimeError:  # no home folder
        pass
    return db


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


class SharedStorageRequired(RuntimeError):
    """A shared runtime was asked to keep runs somewhere its replicas do not share."""


def served_db(environ: Mapping[str, str] = os.environ) -> str:
    """The database the server keeps runs in: `default_db()` on `langgraph dev` (its in-memory
    runtime, one process); under a shared runtime, PostgreSQL only."""
    edition = environ.get("LANGGRAPH_RUNTIME_EDITION") or "inmem"
    if edition == "inmem":
        return default_db(environ)
    db = environ.get("WARRANT_DB") or _psycopg_url(environ.get("DATABASE_URI", ""))
    if not is_postgres(db):
        raise SharedStorageRequired(
            f"the {edition!r} runtime shares runs between replicas: WARRANT_DB (or DATABASE_URI) "
            f"must be a postgresql:// URL, not {db or 'unset'!r}"
        )
    return db


def _psycopg_url(uri: str) -> str:
    """`postgresql+asyncpg://…` (SQLAlchemy's spelling, as the runtime accepts it) as psycopg's."""
    scheme, sep, rest = uri.partition("://")
    return f"{scheme.split('+')[0]}{sep}{rest}" if sep else uri


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def checked_db(db: str) -> str:
    """`db` if it can name a store, else a ValueError saying why in one line: an unknown URL
    scheme (`mysql://…`, `sqlite:///…`, `memory:`) must not become a SQLite file of that name."""
    if db == "memory" or is_postgres(db):
        return db
    if _SCHEME.match(db):
        raise ValueError(
            f"--db {db!r} is not supported: give memory, a SQLite file path or postgresql://…"
        )
    if Path(db).is_dir():
        raise ValueError(f"--db {db!r} is a folder, not a SQLite file")
    return db


def missing_folder(db: str) -> str | None:
    """Why a SQLite file given on the command line cannot be reached, if its folder is missing:
    the command line makes only the default store's folder, never a mistyped one."""
    if db == "memory" or is_postgres(db) or Path(db).parent.is_dir():
        return None
    return f"cannot open SQLite database {db}: the folder {Path(db).parent} does not exist"


def redact(url: str) -> str:
    """A database URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
