"""A run's record written in its checkpoint's transaction, in the SQLite file a leased run is kept in.

As on PostgreSQL (`ledger.persistence.lease`): a step hands its store writes over (`defer`) instead
of committing them on the store's connection, and the saver writes them first in the transaction
of its next write (the task's writes, or the checkpoint), on its own connection: the record and the
state that points to it commit together, or neither does (the transaction is rolled back on any
error; LangGraph's saver commits whatever it wrote). Until then the store reads them back from the
hand-over (`ledger.persistence.waiting.WaitingStore`, the base both leases share). A call's intent is recorded and its attempt returned in one statement.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import orjson
from langgraph.store.base import PutOp
from langgraph.store.sqlite import SqliteStore

from ledger.persistence.private_api import store_transaction, write_puts
from ledger.persistence.pruning import PrunableSqliteSaver
from ledger.persistence.waiting import WaitingStore

_COUNT_ATTEMPT = """
INSERT INTO store (prefix, key, value, created_at, updated_at)
VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)
ON CONFLICT (prefix, key) DO UPDATE
SET value = json_set(excluded.value, '$.attempts', 1 + CASE
        WHEN json_type(store.value, '$.attempts') = 'integer'
         AND json_extract(store.value, '$.attempts') >= 1
        THEN json_extract(store.value, '$.attempts') ELSE 1 END),
    updated_at = CURRENT_TIMESTAMP
RETURNING json_extract(value, '$.attempts')
"""
"""An item without a plausible count (a positive integer) says at least one attempt started, as
`ledger.intents` reads it."""


class SqliteRecordStore(WaitingStore[SqliteStore, sqlite3.Cursor]):
    """The leased run's store: a step's record handed over to the saver (`defer`), the rest
    LangGraph's `SqliteStore`."""

    def _send(self, puts: list[PutOp], cur: sqlite3.Cursor) -> None:
        write_puts(self.store, puts, cur)

    def _round_trip(self) -> AbstractContextManager[sqlite3.Cursor]:
        """A transaction on the store's connection."""
        return store_transaction(self.store)

    def count_attempt(self, namespace: tuple[str, ...], key: str, mark: dict[str, Any]) -> int:
        """A call's intent (`mark`, `attempts: 1` for a first one) and its attempt: one more than
        the item held, in one statement (what waits stays for the saver's transaction)."""
        value = orjson.dumps({**mark, "attempts": 1}).decode()
        with self._round_trip() as cur:
            cur.execute(_COUNT_ATTEMPT, (".".join(namespace), key, value))
            row = cur.fetchone()
        assert row is not None  # an upsert with RETURNING returns its row
        return int(row[0])


class SqliteRecordSaver(PrunableSqliteSaver):
    """LangGraph's SQLite saver whose every write first writes the record the store holds for it,
    in the same transaction, committed or rolled back whole."""

    def __init__(self, conn: sqlite3.Connection, record: SqliteRecordStore) -> None:
        super().__init__(conn)
        self.record = record

    @contextmanager
    def statement_cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        if not transaction:
            with super().statement_cursor(transaction=False) as cur:
                yield cur
            return
        with self.lock:
            self.setup()
            cur = self.conn.cursor()
            try:
                puts = self.record.send_waiting(cur)
                yield cur
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
            finally:
                cur.close()
        self.record.sent(puts)
