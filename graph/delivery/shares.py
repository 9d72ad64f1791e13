"""Sharing grants in the store: each under its run (`space(thread, "shares")`, keyed by recipient)
and under its recipient (what was shared with them), written in one batch; decided by
`guards.sharing`."""

from __future__ import annotations

from dataclasses import asdict

from langgraph.store.base import BaseStore, PutOp

from guards.sharing import Share
from ledger.record import RunRecord
from ledger.store import ROOT

SHARES = "shares"


def shared_with_space(reader: str) -> tuple[str, ...]:
    return (ROOT, "shared-with", reader)


def grant(store: BaseStore, share: Share) -> None:
    value = asdict(share)
    record = RunRecord(store, share.thread)
    record.write(
        [
            record.put_op(SHARES, share.to, value),
            PutOp(shared_with_space(share.to), share.thread, value, index=False),
        ]
    )


def revoke(store: BaseStore, thread: str, reader: str) -> bool:
    """The grant of run `thread` to `reader` withdrawn (both entries, one batch); False if there
    was none."""
    record = RunRecord(store, thread)
    if record.value(SHARES, reader) is None:
        return False
    record.write(
        [record.put_op(SHARES, reader, None), PutOp(shared_with_space(reader), thread, None)]
    )
    return True


def shares_of(store: BaseStore, reader: str) -> list[Share]:
    """Every grant naming `reader`."""
    found = store.search(shared_with_space(reader), limit=1000)
    return [Share(**item.value) for item in found]


def run_shares(store: BaseStore, thread: str) -> list[Share]:
    return [Share(**item.value) for item in RunRecord(store, thread).listed(SHARES, limit=1000)]
